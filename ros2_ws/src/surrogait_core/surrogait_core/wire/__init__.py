"""The Go2's wire: the unitree_sdk2 DDS messages and what the motor drivers do with them.

LowCmd/LowState encoding and decoding (`go2_wire`), their byte-image fast path (`go2_wire_image`)
and CRC (`go2_crc`); raw DDS readers (`dds_raw_reader`) and the rt/lowcmd watcher's stream
(`lowcmd_stream`); the check of the DDS network interface name (`network_interface`); and the
motor drivers' torque law (`motor_driver_law`), the meaning of a LowCmd's gains, targets, mode and
"no target" sentinels, which the simulator applies and the safety monitor judges by. Import each
module by its full path.
"""
