"""What a session's MCAP file holds, read back with the mcap library: `mcap info` for machines without the CLI.

    python -m surrogait_recorder.info runs/sessions/session_20261204T101500Z.mcap

Prints the profile, the time span, each channel (topic, schema, encodings, message count, rate) and the
session's metadata and attachments; `--decode N` also decodes the first N messages of every channel with their
schemas (mcap-ros2-support's decoder, the one Foxglove's and PlotJuggler's readers agree with), which fails
loudly on a schema that does not fit its messages.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Iterator
from pathlib import Path

from mcap.reader import make_reader
from mcap_ros2.decoder import DecoderFactory


@dataclasses.dataclass(frozen=True)
class Channel:
    topic: str
    schema: str  # the message type
    schema_encoding: str
    message_encoding: str
    count: int


@dataclasses.dataclass(frozen=True)
class RecordingInfo:
    path: Path
    profile: str
    library: str
    start_ns: int
    end_ns: int
    channels: dict[str, Channel]  # by topic
    metadata: dict[str, dict[str, str]]  # by name
    attachments: dict[str, bytes]  # by name

    @property
    def duration_s(self) -> float:
        return (self.end_ns - self.start_ns) * 1e-9

    def rate_hz(self, topic: str) -> float:
        return self.channels[topic].count / self.duration_s if self.duration_s > 0 else float("nan")


def read_info(path: Path) -> RecordingInfo:
    """The file's summary (its index: the file must be finished, as the recorder finishes it on SIGINT)."""
    with Path(path).open("rb") as f:
        reader = make_reader(f)
        header, summary = reader.get_header(), reader.get_summary()
        if summary is None or summary.statistics is None:
            raise ValueError(f"{path}: no summary (an unfinished recording: the recorder did not stop cleanly)")
        counts = summary.statistics.channel_message_counts
        channels = {}
        for channel in summary.channels.values():
            schema = summary.schemas[channel.schema_id]
            channels[channel.topic] = Channel(channel.topic, schema.name, schema.encoding, channel.message_encoding,
                                              counts.get(channel.id, 0))
        metadata = {m.name: dict(m.metadata) for m in reader.iter_metadata()}
        attachments = {a.name: a.data for a in reader.iter_attachments()}
    stats = summary.statistics
    return RecordingInfo(Path(path), header.profile, header.library, stats.message_start_time,
                         stats.message_end_time, channels, metadata, attachments)


def decoded(path: Path, topics: list[str] | None = None, limit: int | None = None) -> Iterator[tuple[str, int, object]]:
    """(topic, log time ns, decoded message) of `topics` (all by default), at most `limit` per topic."""
    seen: dict[str, int] = {}
    with Path(path).open("rb") as f:
        reader = make_reader(f, decoder_factories=[DecoderFactory()])
        for _, channel, message, msg in reader.iter_decoded_messages(topics=topics):
            n = seen.get(channel.topic, 0)
            if limit is not None and n >= limit:
                continue
            seen[channel.topic] = n + 1
            yield channel.topic, message.log_time, msg


def publish_times_ns(path: Path, topic: str) -> list[int]:
    """The publish times of `topic`'s messages, in file order (no decoding; the wire's are its source timestamps)."""
    with Path(path).open("rb") as f:
        return [message.publish_time for _, _, message in make_reader(f).iter_messages(topics=[topic])]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("--decode", type=int, default=0, metavar="N", help="decode the first N messages of each "
                                                                            "channel with its schema")
    args = parser.parse_args(argv)
    try:
        info = read_info(args.file)
    except (OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(f"{info.path}: profile {info.profile}, {info.library}; {info.duration_s:.1f} s, "
          f"{sum(c.count for c in info.channels.values())} messages")
    width = max((len(t) for t in info.channels), default=0)
    for topic, c in sorted(info.channels.items()):
        print(f"  {topic:<{width}}  {c.schema} ({c.schema_encoding}/{c.message_encoding})  {c.count} messages, "
              f"{info.rate_hz(topic):.1f} Hz")
    for name, values in info.metadata.items():
        print(f"metadata {name}: " + ", ".join(f"{k}={v}" for k, v in values.items()))
    for name, data in info.attachments.items():
        print(f"attachment {name}: {len(data)} bytes")
    if args.decode:
        counts: dict[str, int] = {}
        for topic, _, _ in decoded(args.file, limit=args.decode):
            counts[topic] = counts.get(topic, 0) + 1
        print(f"decoded {sum(counts.values())} messages on {len(counts)} channels with their schemas")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
