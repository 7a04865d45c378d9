"""The rclpy side the four nodes share: parameters declared from their table, start-up, spin and shutdown.

Every node is a module-level rclpy `Node` subclass whose `main()` is `run_node(TheNode, NAME)`.
rclpy is imported inside the functions only, so the rest of `surrogait_core` stays importable and
testable without ROS.
"""

from __future__ import annotations

import faulthandler
import signal
import sys
import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, TypeVar

from surrogait_core.runtime.dds_transport import use_udp_alone
from surrogait_core.runtime.node_params import ParamError, parameter_table, read_params

if TYPE_CHECKING:
    from rclpy.node import Node

T = TypeVar("T")

EXIT_BAD_CONFIG = 2  # bad parameters, an unreadable parameters file, a refused policy file...
EXIT_FAILED = 1  # a failure while running
STACK_DUMP_SIGNAL = signal.SIGUSR1  # `kill -USR1 PID`: a node's thread stacks on its stderr
SPIN_TIMEOUT_S = 0.1  # the executor's longest wait: how soon a SIGINT/SIGTERM is acted on


def report_error(node_name: str, message: str) -> None:
    """One line on stderr, `<node>: error: <message>`, the form the nodes' callers and tests look for."""
    print(f"{node_name}: error: {message}", file=sys.stderr, flush=True)


def declare_params(node: Node, cls: type[T], *, checked_elsewhere: Iterable[str] = ()) -> T:
    """Declare every field of the parameter table `cls` on `node`, read the values, check them (`read_params`).

    Declared with dynamic typing, so a YAML `2` for a float reaches `read_params` (which accepts it)
    and a wrong type gets its message there rather than rclpy's exception. A name the parameters
    file sets that the node has not declared is refused as unknown, unless it starts with one of
    `checked_elsewhere`: a group the node declares and checks itself.
    """
    from rcl_interfaces.msg import ParameterDescriptor

    values: dict[str, object] = {}
    for name, (default, description) in parameter_table(cls).items():
        node.declare_parameter(name, default, ParameterDescriptor(description=description, dynamic_typing=True))
        values[name] = node.get_parameter(name).value
    prefixes = tuple(checked_elsewhere)
    for name, override in getattr(node, "_parameter_overrides", {}).items():
        if not node.has_parameter(name) and not (prefixes and name.startswith(prefixes)):
            values[name] = override.value  # unknown: refused by read_params
    return read_params(cls, values)


def node_executor(node: Node):
    """The executor `node`'s callbacks run on: rclpy's EventsExecutor where this rclpy has one (Kilted; Jazzy from
    7.1.4) and the node uses no guard condition (it refuses them), else the SingleThreadedExecutor. The latter
    rebuilds its wait set in Python at every wake-up: on a 2-core machine it cost 0.65-0.80 ms of CPU per
    Odometry message at 100 Hz, the EventsExecutor 0.22-0.31 ms; the safety monitor's ROS thread took 14 % of
    a core, in real time (rehearsal log 2026-12-07)."""
    try:
        from rclpy.experimental import EventsExecutor
    except ImportError:
        EventsExecutor = None
    if EventsExecutor is None or list(node.guards):
        from rclpy.executors import SingleThreadedExecutor

        return SingleThreadedExecutor(context=node.context)
    return EventsExecutor(context=node.context)


def spin_until(node: Node, stop: threading.Event) -> None:
    """Spin `node` on `node_executor(node)` in this thread until `stop` is set."""
    executor = node_executor(node)
    executor.add_node(node)
    try:
        while not stop.is_set():
            executor.spin_once(timeout_sec=SPIN_TIMEOUT_S)
    finally:
        executor.shutdown(timeout_sec=2.0)


def run_node(make_node: Callable[[], Node], node_name: str, argv: list[str] | None = None,
             errors: tuple[type[Exception], ...] = ()) -> int:
    """Run a node as its process does, from start-up to shutdown; returns the exit code.

    1. SIGINT and SIGTERM set a stop event (installed first, so a signal during the start-up
       still ends the process cleanly); rclpy installs no handlers of its own, so the ROS context
       stays valid until the node has stopped.
    2. The participant onto UDP alone where nothing else changes (`dds_transport.use_udp_alone`, said on
       stdout), then `rclpy.init(argv)`; an unreadable parameters file is one error line and EXIT_BAD_CONFIG.
    3. `make_node()`, then the node's `start()` if it has one. A ParamError, or one of `errors`
       (other mistakes a user can fix: a refused policy file...), is one error line and EXIT_BAD_CONFIG.
    4. The node's `run(stop)` if it has one (returns the exit code), else `spin_until(node, stop)` and 0.
    5. The node's `stop()` if it has one (once started), `destroy_node()`, `rclpy.try_shutdown()`.

    SIGUSR1 writes every thread's stack to stderr (faulthandler: from C, so it works while the main thread
    is stuck inside a C call): how a process that does not exit on SIGINT shows where it hangs.
    """
    faulthandler.register(STACK_DUMP_SIGNAL, all_threads=True)
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    print(f"[{node_name}] {use_udp_alone()}", flush=True)  # before rclpy creates the participant
    import rclpy
    from rclpy.signals import SignalHandlerOptions

    args = sys.argv if argv is None else argv
    try:
        rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    except Exception as e:  # rcl reports an unreadable parameters file as RCLError
        report_error(node_name, f"cannot read the ROS arguments or the parameters file ({' '.join(args[1:])}): {e}")
        return EXIT_BAD_CONFIG
    node = None
    try:
        try:
            node = make_node()
            if hasattr(node, "start"):
                node.start()
        except (ParamError, *errors) as e:
            report_error(node_name, str(e))
            return EXIT_BAD_CONFIG
        try:
            if hasattr(node, "run"):
                return node.run(stop)
            spin_until(node, stop)
            return 0
        finally:
            if hasattr(node, "stop"):
                node.stop()
    finally:
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
