"""Does every pinned deployment wheel resolve for linux/amd64 and linux/arm64 under Python 3.12?

Not a test: it asks the package index (network). For each pin of requirements-deploy.txt,
requirements-no-deps.txt and requirements-jazzy.txt, one `pip download --no-deps --only-binary=:all:
--platform ... --python-version 3.12` per platform (manylinux tags up to glibc 2.39, Ubuntu 24.04's, and
`any`), and writes bench/results/wheel_resolution.{json,md}: the wheel file each resolved to, or pip's last
line where none did.

    python bench/wheel_resolution.py [--python-version 3.12] [--out bench/results/wheel_resolution]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FILES = ("requirements-deploy.txt", "requirements-no-deps.txt", "requirements-jazzy.txt")
GLIBC_MINORS = (17, 24, 27, 28, 31, 34, 35, 39)  # manylinux_2_X tags a wheel may carry; Ubuntu 24.04 has 2.39
PLATFORMS = {
    "linux/amd64": ["manylinux2014_x86_64", *(f"manylinux_2_{m}_x86_64" for m in GLIBC_MINORS), "linux_x86_64"],
    "linux/arm64": ["manylinux2014_aarch64", *(f"manylinux_2_{m}_aarch64" for m in GLIBC_MINORS), "linux_aarch64"],
}
# What the deployment does where a pin has no wheel (written under the table).
WHERE_NO_WHEEL = {
    "cyclonedds": "docker/deploy.Dockerfile builds the Cyclone DDS C library 11.0.1 and this binding from its sdist "
                  "against it in a builder stage (docs/install.md says how without Docker).",
}
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?==(\S+)")


def pins() -> dict[str, str]:
    found: dict[str, str] = {}
    for name in FILES:
        for line in (ROOT / name).read_text().splitlines():
            match = PIN.match(line.split("#")[0].strip())
            if match:
                found[match.group(1)] = match.group(3)
    return found


def resolve(name: str, version: str, tags: list[str], python_version: str, folder: Path) -> dict:
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--python-version",
           python_version, "--implementation", "cp", "-d", str(folder), "--quiet", "--no-cache-dir"]
    for tag in tags:
        cmd += ["--platform", tag]
    result = subprocess.run([*cmd, f"{name}=={version}"], capture_output=True, text=True, timeout=600)
    wheels = sorted(p.name for p in folder.glob("*.whl")
                    if p.name.lower().replace("_", "-").startswith(name.lower().replace("_", "-") + "-"))
    if result.returncode == 0 and wheels:
        return {"resolved": True, "wheel": wheels[-1]}
    last = [line for line in (result.stderr or result.stdout).splitlines()
            if line.strip() and not line.startswith("WARNING: Location")]
    return {"resolved": False, "why": last[-1] if last else f"pip exited {result.returncode}"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python-version", default="3.12")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "wheel_resolution"))
    args = parser.parse_args()
    started = time.time()
    table: dict[str, dict] = {}
    for name, version in pins().items():
        table[name] = {"version": version}
        for platform, tags in PLATFORMS.items():
            with tempfile.TemporaryDirectory() as folder:
                table[name][platform] = resolve(name, version, tags, args.python_version, Path(folder))
            mark = "ok" if table[name][platform]["resolved"] else "NO WHEEL"
            print(f"{name}=={version} {platform}: {mark}", flush=True)
    unresolved = [(n, p) for n, row in table.items() for p in PLATFORMS if not row[p]["resolved"]]
    report = {"python_version": args.python_version, "platforms": PLATFORMS, "files": FILES, "pins": table,
              "unresolved": unresolved, "seconds": round(time.time() - started, 1),
              "date": time.strftime("%Y-%m-%d"), "pip": subprocess.run(
                  [sys.executable, "-m", "pip", "--version"], capture_output=True, text=True).stdout.split(" from")[0]}
    out = Path(args.out)
    out.with_suffix(".json").write_text(json.dumps(report, indent=2) + "\n")
    lines = [f"# Pinned deployment wheels for Python {args.python_version} on linux/amd64 and linux/arm64",
             "", f"`python bench/wheel_resolution.py` on {report['date']} ({report['pip']}): `pip download --no-deps "
             "--only-binary=:all:` per pin and platform (manylinux tags up to glibc 2.39). Pins from "
             + ", ".join(f"`{f}`" for f in FILES) + ".", "",
             "| pin | linux/amd64 | linux/arm64 |", "|---|---|---|"]
    for name, row in table.items():
        cells = [f"`{row[p]['wheel']}`" if row[p]["resolved"] else f"**no wheel**: {row[p]['why']}" for p in PLATFORMS]
        lines.append(f"| {name}=={row['version']} | " + " | ".join(cells) + " |")
    lines += ["", f"**{len(table) * len(PLATFORMS) - len(unresolved)} of {len(table) * len(PLATFORMS)} resolve.**"
              + (" Without a wheel: " + ", ".join(f"{n} ({p})" for n, p in unresolved) + "." if unresolved else ""),
              ""]
    missing = sorted({n for n, _ in unresolved})
    lines += [f"- {name}: {WHERE_NO_WHEEL[name]}" for name in missing if name in WHERE_NO_WHEEL]
    lines += ["- Each pin alone (`--no-deps`): the `ros-jazzy-*` pins are pure-Python wheels whose binary dependencies "
              "(rclpy's C extensions, rmw) are not checked here."]
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print(f"wrote {out}.json and .md; unresolved: {unresolved or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
