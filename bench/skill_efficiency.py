"""The paper's comparison, per skill: samples and wall-clock to reach a skill's target, differentiable trainer vs PPO.

    python bench/skill_efficiency.py --skill pace_flat [--seeds 0 1 2] [--learners diffsim diffsim_mixed ppo]
        [--budget 4e6] [--max-train-s 600] [--eval-every 2e5] [--out bench/results/skill_efficiency]

The learners train on the same environment and task (the skill's `task` overrides on top of
`configs/go2_trot.yaml`), from scratch, with the same seeds; each has its own learner settings: the differentiable
trainer's recipe for the skill (`diffsim`), the same with the zeroth-order mix (`diffsim_mixed`), PPO's defaults from
`surrogait_train.ppo` (`ppo`). Every `--eval-every` samples the
policy is exported and judged by the skill's target through the deployment path (`evaluate_policy`); a run stops
at its first success, or at its budget of samples or training seconds (evaluation time is not counted).

Skills and their targets (issue 34; `--episodes` held-out episodes each, 16 by default where the skills grid uses
32, to keep a run's evaluations short: the shipped files are judged on 32 by bench/skills.py):
- pace_flat: the pace WALKS on flat ground (no falls, vx RMSE <= 0.15 m/s, yaw-rate RMSE <= 0.2 rad/s), in a pace
  (its feet pair up as a pace's: `gait_match` >= GAIT_MATCH_MIN, surrogait_train.gait_pattern);
- trot_rough: the trot crosses the rough course in >= 95 % of episodes;
- trot_slope: the trot crosses the 15 degree slope in >= 95 % of episodes.

Results merge into OUT.json by (skill, learner, seed); OUT.md shows every skill: per seed whether and when the
target was reached, the medians (a seed that did not get there counts as "> its budget") and PPO / diff-sim.
Learners may run at once, one core each (`env.num_threads=1`, `--learners` one each, `--out` apart), and be merged
afterwards: `python bench/skill_efficiency.py --merge A.json B.json [--merge-as LEARNER] [--out ...]`.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import math
import shlex
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine_info import describe_machine  # noqa: E402
from provenance import git_commit  # noqa: E402
from sample_efficiency import DiffSimRun, PPORun, load_base_config, median_with_inf  # noqa: E402

from surrogait_train.api import ZEROTH_ORDER_SHARE  # noqa: E402  (the first recipe that paced from scratch)

RESULTS = Path(__file__).resolve().parent / "results"


@dataclasses.dataclass(frozen=True)
class Skill:
    task: tuple[str, ...]  # overrides both learners train with (the environment and the task)
    diffsim: tuple[str, ...]  # the differentiable trainer's own settings for it
    judge: Callable[[Path, int], tuple[bool, dict]]  # (policy file, episodes) -> (target met, figures)
    target: str

    @property
    def diffsim_mixed(self) -> tuple[str, ...]:
        """The differentiable trainer's recipe with the zeroth-order mix (learner "diffsim_mixed")."""
        return (*self.diffsim, *ZEROTH_ORDER_SHARE)



def walks(gait: str) -> Callable[[Path, int], tuple[bool, dict]]:
    def judge(policy: Path, episodes: int) -> tuple[bool, dict]:
        from surrogait_train.evaluate import evaluate_policy
        from surrogait_train.gait_pattern import GAIT_MATCH_MIN

        r = evaluate_policy(policy, num_episodes=episodes, episode_s=10.0, gait=gait)
        return r.walks and r.gait_match >= GAIT_MATCH_MIN, {
            "falls": int(sum(r.fell)), "vx_rmse": round(r.vx_rmse, 4), "yaw_rate_rmse": round(r.yaw_rate_rmse, 4),
            "gait_match": round(r.gait_match, 3)}
    return judge


def crosses(terrain: str, share: float) -> Callable[[Path, int], tuple[bool, dict]]:
    def judge(policy: Path, episodes: int) -> tuple[bool, dict]:
        from surrogait_train.evaluate import evaluate_policy

        r = evaluate_policy(policy, num_episodes=episodes, episode_s=12.0, terrain=terrain)
        return r.crossed_rate >= share, {"crossed": round(r.crossed_rate, 3), "falls": int(sum(r.fell))}
    return judge


# The differentiable trainer's recipe (bench/results/skill_levers.md says which lever does what).
DIFFSIM_RECIPE = ("learner.residual_reference=true", "env.stand_speed_m_s=0.1", "surrogate.gradient_decay=0.9")
LEARNERS = ("diffsim", "diffsim_mixed", "ppo")
SKILLS: dict[str, Skill] = {
    "pace_flat": Skill(("env.gait=pace",), DIFFSIM_RECIPE, walks("pace"), "the pace WALKS on flat ground"),
    "trot_rough": Skill(("env.terrain=rough", "reward.fall=-5", "reward.swing_height=0", "reward.swing_clearance=-300"),
                        DIFFSIM_RECIPE, crosses("rough", 0.95), "the trot crosses rough ground in >= 95 %"),
    "trot_slope": Skill(("env.terrain=slope", "reward.fall=-5", "reward.swing_height=0", "reward.swing_clearance=-300"),
                        DIFFSIM_RECIPE, crosses("slope", 0.95), "the trot crosses the 15° slope in >= 95 %"),
}


def run_skill(skill_name: str, learner: str, seed: int, args, base_cfg: dict, work: Path) -> dict:
    skill = SKILLS[skill_name]
    recipe = {"diffsim": skill.diffsim, "diffsim_mixed": skill.diffsim_mixed}.get(learner, ())
    overrides = [*skill.task, *recipe, *args.overrides]
    if learner != "ppo":
        run = DiffSimRun(seed, overrides, base_cfg, work / f"{skill_name}_{learner}_{seed}")
    else:
        run = PPORun(seed, overrides, list(args.ppo), base_cfg)
    evaluations, reached = [], None
    target = 0
    try:
        while target < args.budget and not (args.max_train_s and run.train_s >= args.max_train_s):
            target = min(int(args.budget), target + int(args.eval_every))
            run.train_until(target, args.max_train_s)
            t0 = time.perf_counter()
            met, figures = skill.judge(run.export(work / f"{skill_name}_{learner}_{seed}.onnx"), args.episodes)
            row = {"samples": run.env_samples, "train_s": round(run.train_s, 1), "met": met, **figures,
                   "eval_s": round(time.perf_counter() - t0, 1)}
            evaluations.append(row)
            print(f"[{skill_name} {learner} seed {seed}] {row}", flush=True)
            if met:
                reached = row
                break
    finally:
        run.close()
    return {"skill": skill_name, "learner": learner, "seed": seed, "overrides": overrides, "reached": reached,
            "samples_trained": run.env_samples, "seconds_trained": round(run.train_s, 1), "evaluations": evaluations}


def censored_median(runs: list[dict], key: str, budget_key: str) -> str:
    values = sorted(r["reached"][key] if r["reached"] else math.inf for r in runs)
    med = median_with_inf(values)
    if math.isfinite(med):
        return f"{med:,.0f}" if key == "samples" else f"{med:.0f} s"
    budget = max(r[budget_key] for r in runs)
    return f"> {budget:,.0f}" if key == "samples" else f"> {budget:.0f} s"


def comparison(runs: list[dict]) -> str:
    """PPO's median over the differentiable trainer's, in samples, or what a censored median allows to say."""
    medians = {}
    for learner in LEARNERS:
        mine = [r for r in runs if r["learner"] == learner]
        if mine:
            values = sorted(r["reached"]["samples"] if r["reached"] else math.inf for r in mine)
            medians[learner] = (median_with_inf(values), max(r["samples_trained"] for r in mine))
    if "ppo" not in medians or len(medians) < 2:
        return "No PPO runs, or no others: no comparison."
    return " ".join(f"{learner}: {versus_ppo(*medians[learner], *medians['ppo'])}" for learner in medians
                    if learner != "ppo")


def versus_ppo(diff: float, diff_budget: int, ppo: float, ppo_budget: int) -> str:
    if math.isfinite(diff) and math.isfinite(ppo):
        return f"PPO ÷ diff-sim, median samples: **{ppo / diff:.1f}×**."
    if math.isfinite(ppo):
        text = (f"**PPO reached the target and it did not** (PPO's median {ppo:,.0f} samples; its runs stopped at "
                f"{diff_budget:,.0f}).")
        if diff_budget < ppo:
            text += " Its runs stopped below PPO's median samples (the seconds cap): in samples alone, not a verdict."
        return text
    if math.isfinite(diff):
        return f"PPO ÷ diff-sim, median samples: more than **{ppo_budget / diff:.1f}×** (PPO did not reach it)."
    return "Neither learner reached the target within its budget."


def markdown(report: dict) -> str:
    lines = ["# Skill efficiency: differentiable trainer vs PPO, per skill (issue 34)", "",
             f"Machine: {report['machine']}. Each run from scratch, stopping at its first success; budgets and the "
             "command per skill below. Evaluation time is not counted.", ""]
    for skill_name in SKILLS:
        runs = [r for r in report["runs"] if r["skill"] == skill_name]
        if not runs:
            continue
        lines += [f"## {skill_name}: {SKILLS[skill_name].target}", "",
                  "| learner | seed | reached | samples | train s | last evaluation |", "|---|---|---|---|---|---|"]
        for r in sorted(runs, key=lambda r: (r["learner"], r["seed"])):
            last = r["evaluations"][-1] if r["evaluations"] else {}
            shown = {k: v for k, v in last.items() if k not in ("samples", "train_s", "met", "eval_s")}
            if r["reached"]:
                lines.append(f"| {r['learner']} | {r['seed']} | yes | {r['reached']['samples']:,} | "
                             f"{r['reached']['train_s']:.0f} | {shown} |")
            else:
                lines.append(f"| {r['learner']} | {r['seed']} | no | > {r['samples_trained']:,} | "
                             f"> {r['seconds_trained']:.0f} | {shown} |")
        lines += ["", "| learner | seeds reached | median samples | median train seconds |", "|---|---|---|---|"]
        for learner in LEARNERS:
            mine = [r for r in runs if r["learner"] == learner]
            if mine:
                lines.append(f"| {learner} | {sum(bool(r['reached']) for r in mine)}/{len(mine)} | "
                             f"{censored_median(mine, 'samples', 'samples_trained')} | "
                             f"{censored_median(mine, 'train_s', 'seconds_trained')} |")
        lines += ["", comparison(runs)]
        commands = sorted({r["command"] for r in runs})
        lines += [""] + [f"Command: `{c}`" for c in commands] + [""]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skill", choices=sorted(SKILLS), help="the skill to train for (not with --merge)")
    parser.add_argument("--merge", type=Path, nargs="+", default=[],
                        help="no training: add these result files' runs to OUT.json and write OUT.md")
    parser.add_argument("--merge-as", choices=LEARNERS, default=None,
                        help="with --merge: file the merged runs under this learner (runs of `--learners diffsim` "
                             "given the mixed recipe's overrides by hand, as the first ones were)")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--learners", nargs="+", default=list(LEARNERS), choices=LEARNERS)
    parser.add_argument("--budget", type=float, default=4e6, help="env samples per run")
    parser.add_argument("--max-train-s", type=float, default=600.0, help="training seconds per run (0: no cap)")
    parser.add_argument("--eval-every", type=float, default=2e5, help="env samples between evaluations")
    parser.add_argument("--episodes", type=int, default=16)
    parser.add_argument("--ppo", nargs="*", default=[], help="PPO overrides key=value (surrogait_train.ppo.config)")
    parser.add_argument("--out", type=Path, default=RESULTS / "skill_efficiency")
    parser.add_argument("overrides", nargs="*", help="config overrides for both learners")
    args = parser.parse_args()
    if args.out.suffix in (".json", ".md"):
        args.out = args.out.with_suffix("")
    path = Path(f"{args.out}.json")  # not with_suffix: an --out of "runs/w0.8" would write "runs/w0.json"
    if args.merge:
        for other in args.merge:
            report = json.loads(other.read_text())
            runs = [{**r, "learner": args.merge_as or r["learner"]} for r in report["runs"]]
            write_report(path, args.out, runs, report["machine"])
        return
    if not args.skill:
        parser.error("--skill is required (or --merge)")
    torch.set_num_threads(1)
    base_cfg = load_base_config(None)
    work = Path(tempfile.mkdtemp(prefix="skill_efficiency_"))
    command = "python bench/skill_efficiency.py " + shlex.join(sys.argv[1:])
    for learner in args.learners:
        for seed in args.seeds:
            result = run_skill(args.skill, learner, seed, args, base_cfg, work)
            head, dirty = git_commit()
            result.update(command=command, commit=(head or "unknown")[:7] + ("+dirty" if dirty else ""),
                          date=datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"))
            write_report(path, args.out, [result], describe_machine())


def write_report(path: Path, out: Path, runs: list[dict], machine: str) -> None:
    """Merge runs into the report at `path` by (skill, learner, seed) and rewrite its markdown."""
    report = json.loads(path.read_text()) if path.exists() else {"benchmark": "skill_efficiency", "runs": []}
    keys = {(r["skill"], r["learner"], r["seed"]) for r in runs}
    report["runs"] = [r for r in report["runs"] if (r["skill"], r["learner"], r["seed"]) not in keys] + runs
    report["machine"] = machine
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=1))
    Path(f"{out}.md").write_text(markdown(report))


if __name__ == "__main__":
    main()
