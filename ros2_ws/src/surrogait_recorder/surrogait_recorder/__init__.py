"""Session recorder: every robot or rehearsal session as one MCAP file (surrogait_recorder.session_recorder_node)."""
