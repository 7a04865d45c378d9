"""One session's MCAP file, written as rosbag2 writes one: plain Python, no ROS.

Profile `ros2`, one channel per topic with message encoding `cdr`, one schema per message type with encoding
`ros2msg` (the type's full definition, message_definitions), messages as their serialized CDR bytes. That is
what Foxglove Studio and PlotJuggler read from a `ros2 bag record -s mcap` file, so they open this one the same
way. Times are nanoseconds since the Unix epoch: `log_time` when the recorder took the message, `publish_time`
when its writer sent it where that is known (DDS source timestamps), else the log time.

Thread-safe: the recorder's ROS callbacks and its wire thread write through one lock.
"""

from __future__ import annotations

import threading
from collections import Counter
from pathlib import Path

from mcap.well_known import MessageEncoding, Profile, SchemaEncoding
from mcap.writer import CompressionType, Writer

LIBRARY = "surrogait session_recorder"
CHUNK_SIZE_BYTES = 1 << 20  # rosbag2's default MCAP chunk size; zstd-compressed, as rosbag2's default preset


class SessionLog:
    """An MCAP file being written at `path` (the folder is made); `close()` finishes it (its summary and index)."""

    def __init__(self, path: Path, compression: CompressionType = CompressionType.ZSTD):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = self.path.open("wb")
        self._writer = Writer(self._file, chunk_size=CHUNK_SIZE_BYTES, compression=compression)
        self._writer.start(profile=Profile.ROS2, library=LIBRARY)
        self._lock = threading.Lock()
        self._schemas: dict[str, int] = {}
        self._channels: dict[str, int] = {}
        self.counts: Counter[str] = Counter()  # messages written per topic
        self.closed = False

    def add_channel(self, topic: str, type_name: str, definition: str) -> None:
        """A topic of ROS 2 type `type_name` ("sensor_msgs/msg/Imu") whose full definition is `definition`."""
        with self._lock:
            if topic in self._channels:
                raise ValueError(f"{self.path}: topic {topic} has a channel already")
            if type_name not in self._schemas:
                self._schemas[type_name] = self._writer.register_schema(
                    name=type_name, encoding=SchemaEncoding.ROS2, data=definition.encode())
            self._channels[topic] = self._writer.register_channel(
                topic=topic, message_encoding=MessageEncoding.CDR, schema_id=self._schemas[type_name])

    def has_channel(self, topic: str) -> bool:
        return topic in self._channels

    def write(self, topic: str, cdr: bytes, log_time_ns: int, publish_time_ns: int | None = None) -> None:
        """One message of `topic` (its channel added before), as its CDR bytes (with the 4-byte encapsulation)."""
        with self._lock:
            if self.closed:
                return  # a callback that ran after close: the file is finished
            self.counts[topic] += 1
            self._writer.add_message(channel_id=self._channels[topic], log_time=log_time_ns,
                                     publish_time=log_time_ns if publish_time_ns is None else publish_time_ns,
                                     sequence=self.counts[topic], data=cdr)

    def add_metadata(self, name: str, data: dict[str, str]) -> None:
        with self._lock:
            self._writer.add_metadata(name, {k: str(v) for k, v in data.items()})

    def add_attachment(self, name: str, media_type: str, data: bytes, log_time_ns: int) -> None:
        with self._lock:
            self._writer.add_attachment(create_time=log_time_ns, log_time=log_time_ns, name=name,
                                        media_type=media_type, data=data)

    def close(self) -> None:
        """Finish the file (summary, index, footer): until then a reader sees an unfinished recording."""
        with self._lock:
            if self.closed:
                return
            self.closed = True
            self._writer.finish()
            self._file.close()
