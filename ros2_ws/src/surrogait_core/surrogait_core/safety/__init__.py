"""ROS-free safety monitoring: rules, thresholds, the DAMP latch and the fault log."""

from surrogait_core.safety.fault_log import FaultLog, read_fault_log
from surrogait_core.safety.monitor import CheckResult, ResetResult, SafetyEvent, SafetyMonitor
from surrogait_core.safety.rules import Violation
from surrogait_core.safety.thresholds import (
    SafetyThresholds,
    ThresholdError,
    default_thresholds,
    thresholds_from_params,
)

__all__ = [
    "CheckResult", "FaultLog", "ResetResult", "SafetyEvent", "SafetyMonitor", "SafetyThresholds", "ThresholdError",
    "Violation", "default_thresholds", "read_fault_log", "thresholds_from_params",
]
