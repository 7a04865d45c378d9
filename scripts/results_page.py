"""Write docs/results.md from bench/results/*.json: every measured figure, with what it was measured on.

    python scripts/results_page.py            # rewrite docs/results.md
    python scripts/results_page.py --check    # exit 1 if docs/results.md is not what this script writes

For each results file the page says the commit and, for each policy file a figure was measured on, that
file's content hash (sha256), and compares it with the file at the same path now:

- `commit`: recorded by the bench (bench/provenance.py), or, for files that predate that helper, derived
  from git: the last commit that changed the file's numbers (a commit that only rewrote its text, e.g. its
  paths, does not count). The measurement was made at or before it.
- policy hash: recorded by the bench (`policy_sha256`, or an older `policy_md5`), or derived from git: the
  policy file as committed in that same commit (results and the policy they measured are committed
  together). A policy outside the repository (runs/...) without a recorded hash cannot be identified.
- status: **current** (same content as the file now), **STALE** (the file at that path has been replaced
  since: re-measure with the file's command), **unknown** (what was measured cannot be established from
  the record and the history). Nothing is guessed: what cannot be derived is said to be unknown.

The page depends on git history (a shallow clone cannot derive it: `git fetch --unshallow`).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import re
import statistics
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

ROOT = Path(__file__).resolve().parents[1]
RESULTS_DIR = "bench/results"
PAGE = "docs/results.md"

# What a results file cannot say about itself. Labels only: every figure comes from the JSON.
NOTES = {
    "skill_efficiency.json": "The two learners ran at once, one core each (`env.num_threads=1`), merged with "
    "`--merge`: compare samples, not seconds. Each judge is 16 held-out episodes (bench/skills.py judges shipped "
    "files on 32). The differentiable trainer's recipe is `DIFFSIM_RECIPE` (residual on the gait reference, decay "
    "0.9, 64 robots); `diffsim_mixed` is the same with the zeroth-order mix (run as `--learners diffsim` with its "
    "overrides, filed with `--merge-as diffsim_mixed`); PPO's rsl_rl actor is a plain network. The PPO runs were "
    "judged before the judge asked the gait as well (gait_match); measured afterwards, its three reached policies "
    "pace (gait match 0.82, 0.84, 0.84).",
    "sample_efficiency.json": "The differentiable trainer acts as a residual on the clock-driven gait reference (its "
    "config's `learner.residual_reference`); PPO's rsl_rl actor is a plain network. "
    "sample_efficiency_plain_actor.json is the differentiable trainer with a plain actor as well.",
    "sample_efficiency_randomized.json": "Both learners from scratch with domain randomisation on, 8 robots for the "
    "differentiable trainer; the eval is the nominal held-out one.",
    "sample_efficiency_1env_partial.json": "An older trainer (2026-11-29), seeds 0-2; superseded by "
    "sample_efficiency.json.",
    "demo_training_go2_512_robots.json": "The Go2's demo recipe (512 robots), with the pre-flight's session slewed as "
    "the policy node slews commands and cleared snapshots chosen on commands of their own (docs/training-log.md, "
    "2026-12-05 (7)).",
    "demo_training_go1_joint_penalty_10.json": "The Go1's demo recipe before its joint-position penalty went to -1000 "
    "(commit 60b033c; with the slewed pre-flight and the validation step): seed 0 cleared one snapshot of six.",
    "demo_training_go1_512_robots.json": "Measured at 3e260f0 (recipe then 16 robots); its overrides restore the "
    "512 robots the Go1's demo used before: not adopted.",
    "demo_training_go2.json": "16 robots, the Go1's demo recipe, measured on the Go2: not adopted for it (it stands "
    "less still than 512 robots).",
    "train_to_walk_randomised.json": "Randomised from scratch; the shipped recipe randomises only after a nominal "
    "gait exists (ros2_ws/src/surrogait_bringup/policies/README.md).",
}


# ------------------------------------------------------------------------------------------------ git
class Git:
    """Read-only queries on the repository's history (one `git cat-file --batch` process for blobs)."""

    def __init__(self, root: Path):
        self.root = root
        self._cat: subprocess.Popen | None = None
        self._blobs: dict[tuple[str, str], bytes | None] = {}

    def run(self, *args: str) -> str:
        return subprocess.run(["git", *args], cwd=self.root, capture_output=True, text=True, check=True).stdout

    def close(self) -> None:
        if self._cat is not None:
            self._cat.stdin.close()
            self._cat.wait()
            self._cat = None

    def blob(self, commit: str, path: str) -> bytes | None:
        """The file at `commit`, or None where it did not exist."""
        key = (commit, path)
        if key not in self._blobs:
            if self._cat is None:
                self._cat = subprocess.Popen(["git", "cat-file", "--batch"], cwd=self.root,
                                             stdin=subprocess.PIPE, stdout=subprocess.PIPE)
            self._cat.stdin.write(f"{commit}:{path}\n".encode())
            self._cat.stdin.flush()
            header = self._cat.stdout.readline().decode().split()
            if len(header) == 3 and header[1] == "blob":
                data = self._cat.stdout.read(int(header[2]))
                self._cat.stdout.read(1)  # the newline after the content
                self._blobs[key] = data
            else:
                if len(header) == 3:  # a tree or another object: skip its content
                    self._cat.stdout.read(int(header[2]) + 1)
                self._blobs[key] = None
        return self._blobs[key]

    def is_shallow(self) -> bool:
        return self.run("rev-parse", "--is-shallow-repository").strip() == "true"

    def head(self) -> str:
        return self.run("rev-parse", "HEAD").strip()

    def tracked(self) -> set[str]:
        return set(self.run("ls-files", "-z").split("\0")) - {""}

    def history(self, directory: str) -> dict[str, list[str]]:
        """Every file under `directory` -> the commits that changed it, newest first (one `git log`)."""
        out: dict[str, list[str]] = {}
        commit = ""
        for line in self.run("log", "--no-renames", "--format=@%H", "--name-only", "--", directory).splitlines():
            if line.startswith("@"):
                commit = line[1:]
            elif line:
                out.setdefault(line, []).append(commit)
        return out

    def replaced_after(self, commit: str, path: str) -> list[str]:
        """Commits after `commit` (up to HEAD) that gave `path` a new content, oldest first (a commit that only
        removed it, e.g. while moving it, is not one)."""
        try:
            commits = self.run("log", "--reverse", "--format=%H", f"{commit}..HEAD", "--", path).split()
        except subprocess.CalledProcessError:  # a recorded commit this history does not have
            return []
        out, last = [], self.blob(commit, path)
        for c in commits:
            data = self.blob(c, path)
            if data is not None and data != last:
                out.append(c)
            last = data if data is not None else last
        return out

    def date(self, commit: str) -> str:
        return self.run("show", "-s", "--format=%cd", "--date=format:%Y-%m-%d", commit).strip()


def numbers(obj) -> list:
    """The numbers (and booleans, nulls) of a JSON document in order: what a measurement changes."""
    if isinstance(obj, dict):
        return [x for v in obj.values() for x in numbers(v)]
    if isinstance(obj, list):
        return [x for v in obj for x in numbers(v)]
    return [] if isinstance(obj, str) else [obj]


def short(commit: str) -> str:
    """A fixed-length prefix: git's own abbreviation grows with the repository, which would change the page."""
    return commit[:7]


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def policy_bytes(data: bytes) -> bytes:
    """A policy file's content without its provenance entry, which never changes what the policy does: a file that
    got its provenance after it was measured is still the file measured (surrogait_core.policy.provenance)."""
    from surrogait_core.policy.provenance import without_provenance

    return without_provenance(data)


# ------------------------------------------------------------------------------------------ provenance
@dataclass
class PolicyStatus:
    path: str
    status: str  # "current" | "STALE" | "unknown"
    text: str  # the policy as the page names it, with its hash and why the status


@dataclass
class FileProvenance:
    name: str
    commit: str | None  # short hash
    commit_text: str
    date: str
    data: dict
    recorded_sha256: dict[str, str] = field(default_factory=dict)
    recorded_md5: dict[str, str] = field(default_factory=dict)


class Provenance:
    def __init__(self, root: Path):
        self.root = root
        self.git = Git(root)
        if self.git.is_shallow():
            raise SystemExit("results_page: this is a shallow clone; the page derives commits and policy hashes "
                             "from git history. Run `git fetch --unshallow` first.")
        self.tracked = self.git.tracked()
        self.history = self.git.history(RESULTS_DIR)
        self.head = self.git.head()
        self.top_level = {p.split("/", 1)[0] for p in self.tracked} | {"runs"}
        # every policy file the history has seen, so a recorded absolute path maps onto it
        self.known_paths = self.tracked | set(self.git.run("log", "--format=", "--name-only", "--", "*.onnx").split())
        self.now_by_hash: dict[str, str] = {}
        for p in sorted(self.tracked):
            if p.endswith(".onnx") and (root / p).is_file():
                data = policy_bytes((root / p).read_bytes())
                self.now_by_hash.setdefault(sha256(data), p)
                self.now_by_hash.setdefault(hashlib.md5(data).hexdigest(), p)

    def repo_path(self, raw: str) -> str:
        """A recorded path made relative to the repository root where it points into a checkout of it
        (/work/main/training/... -> training/...); otherwise as recorded. The checkout's own location may
        contain a folder named like one of ours (/work/wt/docs/...), so a suffix that is a file the history
        knows wins, then one under runs/, then the first folder of ours."""
        path = PurePosixPath(raw)
        if not path.is_absolute():
            return str(path)
        suffixes = [str(PurePosixPath(*path.parts[i:])) for i in range(1, len(path.parts))]
        for test in (lambda i, p: p in self.known_paths, lambda i, p: path.parts[i] == "runs",
                     lambda i, p: path.parts[i] in self.top_level):
            for i, suffix in enumerate(suffixes, start=1):
                if test(i, suffix):
                    return suffix
        return raw

    def of_file(self, path: Path) -> FileProvenance:
        rel = f"{RESULTS_DIR}/{path.name}"
        raw = path.read_bytes()
        data = json.loads(raw)
        meta = data.get("meta", {}) if isinstance(data.get("meta"), dict) else {}
        recorded = data.get("commit") or meta.get("commit")
        fp = FileProvenance(name=path.name, commit=None, commit_text="", date="", data=data)
        for source in (data, meta):
            for p, h in (source.get("policy_sha256") or {}).items():
                fp.recorded_sha256[self.repo_path(p)] = h
            if source.get("policy_md5") and source.get("policy"):
                fp.recorded_md5[self.repo_path(source["policy"])] = source["policy_md5"]
        if recorded:
            fp.commit = recorded
            dirty = data.get("commit_dirty", meta.get("commit_dirty"))
            fp.commit_text = f"{short(recorded)}" + (" + uncommitted changes" if dirty else "") + " (recorded)"
            fp.date = str(data.get("date") or meta.get("date") or "")[:10]
            return fp
        commits = self.history.get(rel, [])
        if not commits or self.git.blob(self.head, rel) != raw:
            fp.commit_text = "unknown: not committed as it is now (commit it, then regenerate this page)"
            return fp
        fp.commit = self.figures_commit(rel, commits)
        fp.commit_text = f"≤ {short(fp.commit)} (git)"
        fp.date = str(data.get("date") or meta.get("date") or "")[:10] or self.git.date(fp.commit)
        return fp

    def figures_commit(self, rel: str, commits: list[str]) -> str:
        """The newest commit that changed the file's numbers (not only its text)."""
        for i, commit in enumerate(commits):
            if i + 1 == len(commits):
                return commit
            now, before = self.git.blob(commit, rel), self.git.blob(commits[i + 1], rel)
            try:
                if before is None or numbers(json.loads(now)) != numbers(json.loads(before)):
                    return commit
            except (TypeError, ValueError):
                return commit
        return commits[-1]

    def policy(self, fp: FileProvenance, raw: str) -> PolicyStatus:
        path = self.repo_path(raw)
        p = PurePosixPath(path)
        name = f"`{p.name}`" if path in self.tracked or len(p.parts) < 2 else f"`{p.parent.name}/{p.name}`"
        at_commit = self.git.blob(fp.commit, path) if fp.commit else None
        current_file = self.root / path
        present = path in self.tracked and current_file.is_file()
        current_bytes = policy_bytes(current_file.read_bytes()) if present else None
        current = sha256(current_bytes) if current_bytes is not None else None
        if path in fp.recorded_sha256:
            measured, how = fp.recorded_sha256[path], "recorded"
        elif path in fp.recorded_md5:
            recorded_md5 = fp.recorded_md5[path]
            if current and hashlib.md5(current_bytes).hexdigest() == recorded_md5:
                return PolicyStatus(path, "current", f"{name} sha256 {current[:12]} (md5 recorded)")
            if current is None and self.now_by_hash.get(recorded_md5):
                moved = f"moved to `{self.now_by_hash[recorded_md5]}`"
                return PolicyStatus(path, "current", f"{name} md5 {recorded_md5[:12]} (recorded); {moved}")
            text = f"{name} md5 {recorded_md5[:12]} (recorded); not the file now"
            return PolicyStatus(path, "STALE", text + self.replaced(fp, path) + self.now_at(recorded_md5))
        elif at_commit is not None:
            measured, how = sha256(policy_bytes(at_commit)), "git"
        else:
            measured, how = None, ""
        if path not in self.tracked and at_commit is None:
            known = f"sha256 {measured[:12]} ({how}), " if measured else ""
            return PolicyStatus(path, "unknown", f"{name} ({known}not a repository file: cannot be checked)")
        if measured is None:
            return PolicyStatus(path, "unknown", f"{name} (its content when measured is unknown)")
        if current is None:
            moved_to = self.now_by_hash.get(measured)
            if moved_to:  # the same content lives on under another path (the shipped policies moved packages)
                return PolicyStatus(path, "current", f"{name} sha256 {measured[:12]} ({how}); moved to `{moved_to}`")
            return PolicyStatus(path, "STALE", f"{name} sha256 {measured[:12]} ({how}); the file is gone")
        if measured == current:
            return PolicyStatus(path, "current", f"{name} sha256 {measured[:12]} ({how})")
        text = f"{name} sha256 {measured[:12]} ({how}); now {current[:12]}"
        return PolicyStatus(path, "STALE", text + self.replaced(fp, path) + self.now_at(measured))

    def replaced(self, fp: FileProvenance, path: str) -> str:
        if not fp.commit:
            return ""
        after = self.git.replaced_after(fp.commit, path)
        return f", replaced in {', '.join(map(short, after))}" if after else ""

    def now_at(self, digest: str) -> str:
        other = self.now_by_hash.get(digest)
        return f" (that content is `{PurePosixPath(other).name}` now)" if other else ""


# ------------------------------------------------------------------------------------------- figures
@dataclass
class Row:
    text: str
    policies: list[str] = field(default_factory=list)
    no_policy: str = ""  # why the figure depends on no policy file (it trains its own, it measures a probe)
    policy_unrecorded: bool = False  # a policy ran, but the file does not say which
    commit: str = ""  # a commit the row itself records (a file of rows measured at different commits)


def f3(x) -> str:
    return "–" if x is None or not math.isfinite(x) else f"{x:.3f}"  # inf: every robot fell


def ms(x) -> str:
    return "–" if x is None else f"{x * 1e3:.0f} ms"


def robustness(d: dict) -> Iterator[Row]:
    for label, r in d["results"].items():
        cells = r["cells"]
        met = [c for c in cells.values() if c.get("meets_targets")]
        nominal = cells.get("nominal", {})
        misses = [f"{n} ({c['falls']}/{c['episodes']} falls, vx {f3(c.get('vx_rmse'))}, "
                  f"yaw {f3(c.get('yaw_rate_rmse'))})" if "falls" in c else f"{n} (error)"
                  for n, c in cells.items() if not c.get("meets_targets")]
        text = f"**{label}**: meets the targets in **{len(met)}/{len(cells)}** conditions"
        if "falls" in nominal:
            text += (f"; nominal {nominal['falls']}/{nominal['episodes']} falls, vx RMSE {f3(nominal.get('vx_rmse'))}, "
                     f"yaw-rate RMSE {f3(nominal.get('yaw_rate_rmse'))}")
        yield Row(text + (f"; misses: {'; '.join(misses)}" if misses else ""), [r["path"]])


def safety(d: dict) -> Iterator[Row]:
    meta = d["meta"]
    # "baseline": one no-fault walk (files before the bench's --gaits); "baselines": one per gait walked
    bases = d.get("baselines", [d["baseline"]] if d.get("baseline") else [])
    walks = []
    for base in bases:
        false = base.get("false_faults") or []
        verdict = "no false fault" if base.get("ok") and not false else f"{false or 'failed'}"
        # the gaps (s) and the range overshoot (rad) are kept in their units, not as fractions
        fractions = {k: v for k, v in (base.get("max_fraction_of_threshold") or {}).items()
                     if not k.endswith(("_s", "_rad"))}
        worst = max(fractions.items(), key=lambda kv: kv[1], default=None)
        walks.append((f"{base['gait']}: " if len(bases) > 1 else "") + verdict
                     + (f", largest rule {worst[0]} {worst[1]}" if worst else ""))
    baseline = f"no-fault baseline: {'; '.join(walks)}" if walks else "no baseline run"
    if not d["results"]:
        yield Row(f"{meta.get('robot', 'go2')}, no fault injected; {baseline}", [meta["policy"]])
        return
    ok = [r for r in d["results"] if r.get("ok")]
    lat = ", ".join(f"{r['scenario']} {ms(r.get('latency_s'))}" for r in d["results"] if "error" not in r)
    errors = [f"{r['scenario']}: {r['error'][:60]}" for r in d["results"] if "error" in r]
    phase = next((r["phase"] for r in d["results"] if "phase" in r), "?")
    text = (f"{meta.get('robot', 'go2')}, {phase}: **{len(ok)}/{len(d['results'])}** injected faults pass; {baseline}; "
            f"fault to damping: {lat}" + (f"; errors: {'; '.join(errors)}" if errors else ""))
    yield Row(text, [meta["policy"]])


def demo_reliability(d: dict) -> Iterator[Row]:
    for name, c in d["configs"].items():
        s = c["summary"]
        faults = ", ".join(f"{k} ({v['real']} real, {v['not_real']} not real)" if isinstance(v, dict) else f"{k} {v}"
                           for k, v in s["faults_by_cause"].items()) or "none"
        text = (f"{name} (`{c['motor_model']}`): **{s['completed']}/{s['runs']}** sessions completed, "
                f"{s['falls']} falls, safety faults: {faults}")
        if name == "trained_each":
            yield Row(text + " (each run trains its own policy)", no_policy="trains its own policy each run")
        else:
            yield Row(text, [c["policy"]])


def demo_training_preflight(d: dict) -> Iterator[Row]:
    cleared = [r["iteration"] for r in d["rows"] if r["cleared"]]
    not_cleared = [r["iteration"] for r in d["rows"] if not r["cleared"]]
    yield Row(f"snapshots of one {d['train_s']:.0f} s demo training ({' '.join(d['overrides'])}): cleared "
              f"{compress(cleared)}; not cleared {compress(not_cleared)}", no_policy="trains its own policy")


def demo_training(d: dict) -> Iterator[Row]:
    runs = d["runs"]
    walks = sum(r["walks"] for r in runs)
    both = sum(r["walks"] and r["stands"] for r in runs)
    recipe = " ".join([*d["recipe"], *d["overrides"]])
    yield Row(f"make demo's training step, {d['robot']}, {d['budget_s']:.0f} s ({recipe}): WALKS {walks}/{len(runs)}, "
              f"walks and stands still {both}/{len(runs)} (seeds {' '.join(str(r['seed']) for r in runs)})",
              no_policy="trains its own policy each seed")


def compress(xs: list[int]) -> str:
    return ", ".join(map(str, xs)) or "none"


def preflight(d: dict) -> Iterator[Row]:
    for r in d["rows"]:
        verdict = "**cleared**" if r["cleared"] else "not cleared"
        imbalance = r.get("left_right_imbalance")
        outcome = r.get("demo_outcome", "")
        verdict += f" (its demo: {outcome})" if outcome and not outcome.startswith("(") else ""
        yield Row(f"{verdict}: {r['falls']}/{r['robots']} falls; peaks of the monitor's thresholds: joint speed "
                  f"{r['joint_speed']:.2f}, commanded torque {r['commanded_torque']:.2f}, tilt {r['tilt']:.2f}"
                  + (f"; left/right RMS speed ratio {imbalance:.2f}" if imbalance is not None else "")
                  + f"; vx RMSE {f3(r.get('vx_rmse'))}", [r["policy"]])


def control_loop(d: dict) -> Iterator[Row]:
    s, c = d["stats"], d["config"]
    what = "full stack (+ estimator, safety monitor)" if c.get("full_stack") else "simulator + policy node"
    rt = c.get("realtime_priority")
    yield Row(f"{what}{', normal scheduling' if rt == 0 else ''}: LowCmd period deviation p99 "
              f"**{s['period_dev_p99_ms']:.2f} ms** (max {s['period_dev_max_ms']:.1f}); inference p99 "
              f"{s['inference_p99_ms']:.2f} ms; policy process CPU {s['cpu_percent_of_core']:.1f} % of a core",
              [c["policy"]])


def estimator(d: dict) -> Iterator[Row]:
    w, up = d["walking"], d["stand_up"]
    text = (f"{d['mode']}, driver {d['driver']}, vx {d['commanded_vx_mps']} m/s: walking RMSE vx "
            f"**{w['rmse_vx_mps']:.3f}**, vy {w['rmse_vy_mps']:.3f} m/s, height {w['height_err_rmse_m'] * 100:.2f} cm "
            f"(max {w['height_err_max_m'] * 100:.2f})")
    if d["mode"] == "live":
        text += (f"; latency p95 {w['latency_ms']['p95']:.1f} ms; height trusted "
                 f"{up.get('height_trusted_after_s', float('nan')):.2f} s after stand-up")
    if d.get("policy"):
        yield Row(text, [d["policy"]])
    else:
        yield Row(text, no_policy="a scripted driver, no policy")


def estimator_step_cost(d: dict) -> Iterator[Row]:
    yield Row(f"one filter step {d['per_step_ms']:.3f} ms; {d['share_of_a_core_at_500_hz'] * 100:.0f} % of a core "
              "at 500 Hz", no_policy="no policy")


def train_to_walk(d: dict) -> Iterator[Row]:
    for kind, a in d["aggregate"].items():
        runs = [r for r in d["runs"] if r["kind"] == kind]
        walks = [f"seed {r['seed']} at {r['first_walk']['train_s']:.0f} s ({r['first_walk']['env_samples'] / 1e3:.0f} "
                 "k samples)" for r in runs if r["first_walk"]]
        robots = f"{a['num_envs']} robot{'s' if a['num_envs'] > 1 else ''}"
        text = (f"{d['label']}, {robots}: **{a['text']['seeds_walked']}** seeds walked within {a['budget_s']:.0f} s; "
                f"median {a['text']['median_train_s']}"
                + (f" — {', '.join(walks)}" if walks else ""))
        if kind == "batched":
            fr = [r["trainer_fraction_of_raw"] for r in runs if r.get("trainer_fraction_of_raw")]
            if fr:
                text += f"; trainer env steps/s ÷ raw MuJoCo {min(fr):.2f}-{max(fr):.2f}"
        yield Row(text + f" (`{' '.join(d['overrides'])}`)", no_policy="trains its own policy")


def skill_levers(d: dict) -> Iterator[Row]:
    for name, r in d["rows"].items():
        j = r.get("judged", {})
        parts = [f"{g} {'WALKS' if w.get('walks') else 'does not walk'} ({w.get('falls')}/{w.get('episodes')} falls, "
                 f"vx {f3(w.get('vx_rmse'))})" for g, w in j.get("walk", {}).items()]
        parts += [f"{g} at a zero command {'holds' if st.get('holds') else 'does not hold'} "
                  f"(vx {f3(st.get('vx_rmse'))})" for g, st in j.get("stand", {}).items()]
        parts += [f"{t} crossed {c.get('crossed', 0) * 100:.0f} %" for t, c in j.get("terrain", {}).items()]
        yield Row(f"`{name}` ({r.get('note', '')}; {r.get('iterations')} iterations): " + "; ".join(parts),
                  no_policy="trains its own policy", commit=r.get("commit", ""))


def trainer_throughput(d: dict) -> Iterator[Row]:
    fr = ", ".join(f"{r['num_envs']}: {r['trainer_fraction_of_raw']:.2f}" for r in d["runs"])
    yield Row(f"trainer env steps/s as a fraction of raw batched MuJoCo, by robots: {fr}", no_policy="trains its own")


def sample_efficiency(d: dict) -> Iterator[Row]:
    parts = []
    for name, lr in d["learners"].items():
        med_s, med_t = lr["median_samples_to_walk"], lr["median_seconds_to_walk"]
        parts.append(f"{name}: {lr['seeds_walked']}/{lr['seeds']} seeds walked, median "
                     + (f"{med_s['value'] / 1e3:.0f} k samples, {med_t['value']:.0f} s" if med_s.get("value")
                        else "not within the budget"))
    ratio = d.get("ratio_ppo_over_diffsim", {})
    if not ratio.get("samples"):  # one learner only
        yield Row("; ".join(parts), no_policy="trains its own policies")
        return
    r_s, r_t = ratio["samples"], ratio["seconds"]
    ratio_text = (f"PPO ÷ diff-sim: **{r_s['value']:.1f}×** samples, {r_t['value']:.1f}× seconds"
                  if r_s.get("value") else f"PPO ÷ diff-sim: at most {r_s['upper_bound']:.1f}× samples")
    yield Row("; ".join(parts) + f"; {ratio_text}", no_policy="trains its own policies")


def skill_efficiency(d: dict) -> Iterator[Row]:
    skills: dict[str, dict[str, list[dict]]] = {}
    for r in d["runs"]:
        skills.setdefault(r["skill"], {}).setdefault(r["learner"], []).append(r)
    for skill, learners in skills.items():
        parts = []
        for learner, runs in sorted(learners.items()):
            reached = sorted(r["reached"]["samples"] for r in runs if r["reached"])
            parts.append(f"{learner} {len(reached)}/{len(runs)} seeds" + (
                f" ({', '.join(f'{s / 1e6:.2f}' for s in reached)} M samples)" if reached else
                f" (none within {max(r['samples_trained'] for r in runs) / 1e6:.2f} M samples)"))
        yield Row(f"`{skill}` from scratch: " + "; ".join(parts), no_policy="trains its own policies",
                  commit=", ".join(sorted({r.get("commit", "") for runs in learners.values() for r in runs})))


def surrogate_ablation(d: dict) -> Iterator[Row]:
    by: dict[str, list[dict]] = {}
    for r in d["rows"]:
        by.setdefault(r["variant"], []).append(r)
    for variant, rows in by.items():
        walked = [r for r in rows if math.isfinite(r["eval_vx_rmse"])]  # inf: every robot fell
        tracking = (f"vx RMSE {statistics.mean(r['eval_vx_rmse'] for r in walked):.2f}, yaw-rate RMSE "
                    f"{statistics.mean(r['eval_yaw_rate_rmse'] for r in walked):.2f} over the {len(walked)} seeds "
                    "with robots standing" if walked else "every robot fell in every seed")
        yield Row(f"`{variant}`: {sum(r['eval_fall_rate'] == 0 for r in rows)}/{len(rows)} seeds without falls; "
                  f"mean eval fall rate {statistics.mean(r['eval_fall_rate'] for r in rows):.2f}; {tracking} "
                  f"({rows[0]['iterations']} iterations)", no_policy="trains its own policies")


def push_recovery(d: dict) -> Iterator[Row]:
    for r in d["rows"]:
        lo, hi = r["wilson95"]
        yield Row(f"{r['label']}, kick {r['push_m_s']} m/s: {r['falls']}/{r['episodes']} episodes fell "
                  f"(**{r['fall_share'] * 100:.1f} %**, 95 % interval {lo * 100:.1f}-{hi * 100:.1f} %)", [r["policy"]])


def joint_speed_peaks(d: dict) -> Iterator[Row]:
    peaks = [r["peak_fraction_of_limit"] for r in d["runs"] if r.get("peak_fraction_of_limit") is not None]
    joints = sorted({r["fastest_joint"] for r in d["runs"] if r.get("fastest_joint")})
    stall = f", simulator stalled {d['stall_ms']:.0f} ms five times" if d.get("stall_ms") else ""
    rng = f"{min(peaks):.2f}-{max(peaks):.2f}" if peaks else "–"
    yield Row(f"`{d['motor_model']}`{stall}: fastest joint peaks at **{rng}** of its rated speed in {len(peaks)} "
              f"walks ({', '.join(joints)})", [d["policy"]])


def skills(d: dict) -> Iterator[Row]:
    for gait in d["gaits"]:
        cells = [c for c in d["cells"] if c["gait"] == gait]
        parts = []
        for c in cells:
            match = c.get("gait_match")
            if c["terrain"] == "flat":
                parts.append(f"flat {'WALKS' if c['walks'] else 'does not walk'} ({c['falls']}/{c['episodes']} falls, "
                             f"vx {f3(c.get('vx_rmse'))}" + ("" if match is None else f", gait match {match:.2f}")
                             + ")")
            elif c["terrain"] == "stand":
                parts.append(f"told to stand {'holds' if c.get('stands') else 'does not hold'} "
                             f"({c['falls']}/{c['episodes']} falls, |vx| {f3(c.get('vx_rmse'))}, "
                             f"|vy| {f3(c.get('vy_rmse'))})")
            else:
                crossed = c.get("crossed_rate")
                parts.append(f"{c['terrain']} crossed {'–' if crossed is None else f'{crossed * 100:.0f} %'}")
        yield Row(f"{gait}: " + ", ".join(parts), [d["policy"]])


def host_stall(d: dict) -> Iterator[Row]:
    by: dict[float, list[dict]] = {}
    for r in d["runs"]:
        by.setdefault(r["stall_ms"], []).append(r)
    parts = [f"{sum(r['completed'] for r in rs)}/{len(rs)} sessions completed with {d['stalls_per_session']} "
             f"whole-host pauses of {stall:.0f} ms" for stall, rs in by.items()]
    yield Row("; ".join(parts), [d["policy"]])


def heightfield_contacts(d: dict) -> Iterator[Row]:
    for ground, r in d["rows"].items():
        falls = ", ".join(f"{PurePosixPath(p).stem} {n}/{d['episodes']}" for p, n in r["falls"].items())
        where = ground if ground == "plane" else f"height field, {float(ground) * 100:g} cm cells"
        yield Row(f"{where}: {r['contacts_per_foot']:.2f} contacts per standing foot; falls: {falls}", d["policies"])


PID = re.compile(r" \(\d+\)$")  # "go2_sim (4190)" -> "go2_sim"


def rehearsal_cpu_share(d: dict) -> Iterator[Row]:
    cpu = d["cpu_percent_of_one_core"]
    procs = ", ".join(f"{PID.sub('', k)} {v:.0f} %" for k, v in cpu.items())
    idle = ", ".join(f"{k} {v:.0f} %" for k, v in d["idle_percent"].items())
    yield Row(f"**{sum(cpu.values()):.0f} %** of one core in all ({procs}); idle {idle}",
              no_policy="the policy of the command it watched is not recorded", policy_unrecorded=True)


def gpu_scaling(d: dict) -> Iterator[Row]:
    for r in d["runs"]:
        parts = []
        if "raw_physics_steps_per_s" in r:
            parts.append(f"raw MJX {r['raw_physics_steps_per_s'] / 1e3:.1f} k physics steps/s")
        if "trainer_share_of_raw" in r:
            parts.append(f"trainer {r['trainer_share_of_raw']:.2f} of raw")
        if "resident_share_of_raw" in r:
            parts.append(f"device-resident trainer {r['resident_trainer_physics_steps_per_s'] / 1e3:.1f} k "
                         f"({r['resident_share_of_raw']:.2f} of raw)")
        if "host_trainer_physics_steps_per_s" in r:
            parts.append(f"host-roundtrip trainer {r['host_trainer_physics_steps_per_s'] / 1e3:.1f} k")
        yield Row(f"{d['device']}, {r['num_envs']} robots: " + "; ".join(parts), no_policy="no policy")
    walk = d.get("time_to_walk")
    if walk:
        first = walk["first_walk"]
        yield Row(f"{d['device']}, {walk['num_envs']} robots: "
                  + (f"walks after {first['train_s']} s of training" if first
                     else f"did not walk within {walk['budget_s']:g} s of training"),
                  no_policy="the policy it trains, not kept")


def bridge_stop_stalls(d: dict) -> Iterator[Row]:
    yield Row(f"{len(d['blocked_stops'])} of {d['stops']} stops of a peer held the Gazebo bridge up",
              no_policy="no policy")


def node_stops(d: dict) -> Iterator[Row]:
    yield Row(f"{d['node']}: {len(d['failed'])} of {len(d['stops'])} stops hung", no_policy="no policy")


def sim_recorder_stall(d: dict) -> Iterator[Row]:
    for r in d["results"]:
        yield Row(f"recording at {r['record_rate_hz']:.0f} Hz: longest call on the physics thread "
                  f"{r['record_max_ms']:.1f} ms, {r['calls_over_5ms']} calls over 5 ms", no_policy="no policy")


def rt_stall_probe(d: dict) -> Iterator[Row]:
    worst = ", ".join(f"cpu{k} {max(c['worst_ms'], default=0):.1f} ms" for k, c in d["cpus"].items())
    both = d.get("machine_wide_stalls")
    yield Row(f"worst SCHED_FIFO wake-up delay: {worst}" + ("" if both is None else f"; {len(both)} moments with "
              "every CPU stalled") + (f" ({d['during'][:80]}…)" if d.get("during") else ""), no_policy="no policy")


SECTIONS: list[tuple[str, str, list[tuple[str, Callable[[dict], Iterator[Row]]]]]] = [
    ("Training", "The differentiable trainer and the PPO baseline (these train their own policies; the commit "
     "is what they measured).", [
        ("train_to_walk", train_to_walk), ("trainer_throughput", trainer_throughput),
        ("sample_efficiency", sample_efficiency), ("skill_efficiency", skill_efficiency),
        ("surrogate_ablation", surrogate_ablation),
        ("demo_training_preflight", demo_training_preflight), ("demo_training", demo_training),
        ("gpu_scaling", gpu_scaling), ("gpu_walk", gpu_scaling),
        ("skill_levers", skill_levers)]),
    ("Policies in simulation", "The trainer's evaluation path (the policy node's runner and onnxruntime on "
     "batched MuJoCo robots).", [
        ("robustness", robustness), ("skills", skills), ("push_recovery", push_recovery),
        ("heightfield_contacts", heightfield_contacts), ("preflight", preflight)]),
    ("Rehearsal", "The deployment binaries as separate processes against the simulator, over real DDS / UDP on "
     "loopback.", [
        ("demo_reliability", demo_reliability), ("control_loop", control_loop),
        ("estimator_step_cost", estimator_step_cost), ("estimator_", estimator),
        ("joint_speed_peaks", joint_speed_peaks), ("host_stall", host_stall),
        ("rehearsal_cpu_share", rehearsal_cpu_share)]),
    ("Safety monitor: fault injection", "Each fault injected while walking; latency from the fault to the first "
     "damping command reaching the robot.", [("safety", safety)]),
    ("Investigations", "One-off probes whose findings are described in the commit that added them.", [
        ("bridge_stop_stalls", bridge_stop_stalls), ("node_stops", node_stops),
        ("sim_recorder_stall", sim_recorder_stall), ("rt_stall_probe", rt_stall_probe)]),
]


def family(name: str) -> tuple[str, Callable[[dict], Iterator[Row]]] | None:
    best = None
    for _, _, families in SECTIONS:
        for prefix, fn in families:
            if name.startswith(prefix) and (best is None or len(prefix) > len(best[0])):
                best = (prefix, fn)
    return best


# ----------------------------------------------------------------------------------------------- page
def cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render(root: Path = ROOT) -> str:
    prov = Provenance(root)
    try:
        return _render(root, prov)
    finally:
        prov.git.close()


def _render(root: Path, prov: Provenance) -> str:
    files = sorted(p for p in (root / RESULTS_DIR).glob("*.json") if not p.name.startswith("."))  # .x: a bench's own
    by_section: dict[str, list[str]] = {title: [] for title, _, _ in SECTIONS}
    index: list[str] = []
    stale: list[str] = []
    unsummarised: list[str] = []
    counts = {"current": 0, "STALE": 0, "unknown": 0, "no policy": 0}
    for path in files:
        fp = prov.of_file(path)
        fam = family(path.name)
        link = f"[{path.stem}](../{RESULTS_DIR}/{path.stem}.md)" if path.with_suffix(".md").exists() \
            else f"`{path.name}`"
        if fam is None:
            unsummarised.append(link)
            rows: list[Row] = []
        else:
            try:
                rows = list(fam[1](fp.data))
            except (KeyError, TypeError, ValueError, ZeroDivisionError) as e:
                rows = [Row(f"(this script cannot read it: {type(e).__name__} {e})", no_policy="unreadable")]
        file_statuses = set()
        for row in rows:
            statuses = [prov.policy(fp, p) for p in dict.fromkeys(row.policies)]
            if statuses:
                worst = next(s for s in ("STALE", "unknown", "current") if any(x.status == s for x in statuses))
                policy_text = "; ".join(f"**{x.status}** {x.text}" for x in statuses)
            elif row.policy_unrecorded:
                worst, policy_text = "unknown", f"**unknown** ({row.no_policy})"
            else:
                worst, policy_text = "no policy", f"– ({row.no_policy})"
            counts[worst] += 1
            file_statuses.add(worst)
            if worst == "STALE":
                stale.append(f"- {link}: {row.text.split(':')[0]} — " + "; ".join(
                    x.text for x in statuses if x.status == "STALE"))
            title = next(t for t, _, fams in SECTIONS if any(p == fam[0] for p, _ in fams))
            commit_text = fp.commit_text
            if row.commit:  # e.g. "b7f79bb+dirty", as the trainer's own provenance writes it
                dirty = row.commit.endswith("+dirty")
                commit_text = f"{short(row.commit)}" + (" + uncommitted changes" if dirty else "") + " (recorded)"
            by_section[title].append(f"| {link} | {cell(row.text)} | {cell(policy_text)} | {commit_text} | "
                                     f"{fp.date or '–'} |")
        note = NOTES.get(path.name)
        if note and fam is not None:
            title = next(t for t, _, fams in SECTIONS if any(p == fam[0] for p, _ in fams))
            by_section[title].append(f"| {link} | *{cell(note)}* | | | |")
        machine = fp.data.get("machine") or fp.data.get("meta", {}).get("machine") or ""
        if isinstance(machine, dict):
            machine = f"{machine.get('cpu')}, {machine.get('cores')} cores"
        index.append(f"| {link} | {', '.join(sorted(file_statuses)) or '–'} | {fp.commit_text} | "
                     f"{cell(str(machine)[:60])} |")
    out = [
        "# Measured results",
        "",
        "<!-- GENERATED by `python scripts/results_page.py` from bench/results/*.json; do not edit by hand. "
        "tests/docs/test_results_page.py fails when this page is not what the script writes. -->",
        "",
        "Every figure below is read from a results file in `bench/results/` (each file's `.md` beside it has the "
        "full table, the command that reproduces it and the machine, with its load). This project runs on a shared "
        "2-core VM: timings are noisy, and ratios measured in one run compare better than figures from different "
        "runs.",
        "",
        "**Provenance.** *policy*: the policy file a figure was measured on, by content (sha256 prefix), "
        "**current** when the file at that path has the same content now, **STALE** when it has been replaced "
        "since (the figure describes the old file; re-measure with the command in the file's `.md`), "
        "**unknown** when the record and the history cannot establish it. *commit*: recorded by the bench "
        "(`bench/provenance.py`), or `≤ abc1234 (git)`: the last commit that changed the file's numbers, the "
        "measurement was made at or before it; a policy hash marked *git* is the policy file as committed in "
        "that same commit. How it is derived: `scripts/results_page.py`.",
        "",
        f"Figures: {counts['current']} current, **{counts['STALE']} stale**, {counts['unknown']} unknown, "
        f"{counts['no policy']} that depend on no policy file.",
        "",
        "## Stale figures",
        "",
        *(stale or ["None."]),
        "",
    ]
    for title, intro, _ in SECTIONS:
        out += [f"## {title}", "", intro, "", "| file | figure | policy | commit | date |", "|---|---|---|---|---|",
                *by_section[title], ""]
    out += ["## Every results file", "", "| file | status of its figures | commit | machine |", "|---|---|---|---|",
            *index, ""]
    if unsummarised:
        out += ["Files this script has no summary for (their `.md` has the figures): " + ", ".join(unsummarised), ""]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help=f"exit 1 if {PAGE} is not current")
    args = ap.parse_args(argv)
    page = render(ROOT)
    target = ROOT / PAGE
    if args.check:
        if not target.is_file() or target.read_text() != page:
            print(f"{PAGE} is not current: run `python scripts/results_page.py` and commit it", file=sys.stderr)
            return 1
        print(f"{PAGE} is current")
        return 0
    target.write_text(page)
    print(f"wrote {PAGE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
