"""Short-horizon actor-critic (SHAC, arXiv 2204.07137) through the surrogate-aligned rollout.

One iteration:
1. Roll the policy `horizon` steps through `SurrogateRollout`, keeping the graph. The actor
   loss is the negative mean over robots of the discounted reward sum, bootstrapped with the
   target critic at the window end and at time-outs (value 0 after a fall):
       L = -(1 / (N h)) sum_t [ sum_{k<=t} gamma^k r_k + gamma^{t+1} V(s_{t+1}) at episode ends / window end ]
   Gradients are cut at resets (fresh detached states) and at the window end (`detach_state`).
   Every segment of a robot's window ends at a reset or at the window end, so the sum is formed once
   after the rollout; the target critic carries gradients only on the rows where it bootstraps.
   With `symmetry` > 0 the loss adds that weight times the mean squared left-right mirror difference of the
   actor's actions over the window's observations (surrogait_train.symmetry).
2. Backprop, clip the actor's gradient norm, Adam step. A gradient spike skips the step and shrinks
   the per-step gradient decay of the next windows (`LearnerConfig.spike_decay_factor`).
3. Critic: TD(lambda) targets from the (detached) rewards and target-critic values; several
   minibatch epochs of MSE; target <- alpha target + (1 - alpha) critic.
Steps 2-3 run on `update_threads` torch threads; the rollout leaves the cores to MuJoCo's workers.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import math

import torch

from surrogait_train.config import LearnerConfig
from surrogait_train.diff_env import SurrogateRollout
from surrogait_train.networks import Actor, Critic
from surrogait_train.reference import GaitReference
from surrogait_train.symmetry import Mirror, action_mirror, mirror_difference, observation_mirror


@dataclasses.dataclass
class IterationStats:
    actor_loss: float
    critic_loss: float
    grad_norm: float
    update_skipped: bool  # the actor step was skipped: a gradient spike (or a non-finite gradient)
    gradient_decay: float  # the per-step gradient decay g the window used (shrinks after spikes)
    reward: float  # mean reward per step
    lin_vel_error: float
    yaw_rate_error: float
    fall_rate: float  # falls per robot per second
    terms: dict[str, float]
    # RMS over joints of pi(mirror(o)) - mirror(pi(o)) as joint targets, rad: 0 for a left-right symmetric
    # policy; NaN where the robot cannot be mirrored
    mirror_error_rad: float = math.nan
    # mixed terrain: each course kind's robots' mean curriculum difficulty at the window's end ({} elsewhere)
    terrain_difficulty: dict[str, float] = dataclasses.field(default_factory=dict)


@contextlib.contextmanager
def torch_threads(count: int):
    """Run a block with `count` torch threads (0 = unchanged), then restore the previous count."""
    previous = torch.get_num_threads()
    if count > 0:
        torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


class SHAC:
    def __init__(self, rollout: SurrogateRollout, cfg: LearnerConfig, generator: torch.Generator):
        env = rollout.env
        self.rollout, self.cfg, self.gen = rollout, cfg, generator
        self.device = generator.device  # the environment's (devices.learner_device)
        reference = None
        if cfg.residual_reference:
            reference = GaitReference(env.contract, env.kinematics, env.nominal_feet_b, env.spec.foot_radius_m,
                                      env.cfg.stand_speed_m_s, env.cfg.balance_step_gains,
                                      env.cfg.gait_swing_profile, tuple(env.cfg.balance_step_pitch_gaits))
        self.actor = Actor(env.obs_size, env.action_size, cfg.actor_hidden, cfg.obs_norm_min_std, reference)
        self.actor = self.actor.to(self.device)
        self.action_noise_std = cfg.action_noise_std  # annealed by the trainer (LearnerConfig.action_noise_final_std)
        self.critic = Critic(env.obs_size, cfg.critic_hidden).to(self.device)
        self.target_critic = copy.deepcopy(self.critic)
        self.actor_opt = torch.optim.Adam(self.actor.parameters(), lr=cfg.actor_lr, betas=(0.7, 0.95), foreach=True)
        self.critic_opt = torch.optim.Adam(self.critic.parameters(), lr=cfg.critic_lr, betas=(0.7, 0.95), foreach=True)
        self.obs: torch.Tensor | None = None
        self.grad_norm_mean: float | None = None  # running mean of actor gradient norms (see _is_gradient_spike)
        self.base_gradient_decay = rollout.decay  # the configured g; spikes lower rollout.decay below it
        self.mirrors: tuple[Mirror, Mirror] | None = None
        try:
            self.mirrors = observation_mirror(env.contract), action_mirror(env.contract)
        except ValueError:
            if cfg.symmetry > 0:  # asked for, so the reason must reach the user
                raise
        self.action_scale = torch.tensor(env.contract.action.scale, dtype=torch.float32, device=self.device)
        if not 0.0 <= cfg.zeroth_order_weight <= 1.0:
            raise ValueError(f"learner.zeroth_order_weight must be in [0, 1], got {cfg.zeroth_order_weight}")
        if cfg.zeroth_order_weight > 0 and cfg.action_noise_std <= 0:
            raise ValueError("learner.zeroth_order_weight > 0 needs exploration noise: set learner.action_noise_std "
                             "> 0 (the likelihood-ratio gradient is the noise's correlation with the advantage)")

    def set_lr_fraction(self, fraction: float) -> None:
        for opt, base in ((self.actor_opt, self.cfg.actor_lr), (self.critic_opt, self.cfg.critic_lr)):
            for group in opt.param_groups:
                group["lr"] = base * fraction

    def state_dict(self) -> dict:
        return {
            "actor": self.actor.state_dict(),
            "critic": self.critic.state_dict(),
            "target_critic": self.target_critic.state_dict(),
            "actor_opt": self.actor_opt.state_dict(),
            "critic_opt": self.critic_opt.state_dict(),
            "grad_norm_mean": self.grad_norm_mean,
            "gradient_decay": self.rollout.decay,
        }

    def load_state_dict(self, sd: dict) -> None:
        self.actor.load_state_dict(sd["actor"])
        self.critic.load_state_dict(sd["critic"])
        self.target_critic.load_state_dict(sd["target_critic"])
        self.actor_opt.load_state_dict(sd["actor_opt"])
        self.critic_opt.load_state_dict(sd["critic_opt"])
        self.grad_norm_mean = sd.get("grad_norm_mean")
        self.rollout.decay = sd.get("gradient_decay", self.base_gradient_decay)

    def iterate(self, update_actor: bool = True) -> IterationStats:
        """One window: roll out, step the actor on the window's return (unless `update_actor` is False: a
        critic warm-up), fit the critic."""
        cfg, env = self.cfg, self.rollout.env
        n, h = env.num_envs, cfg.horizon
        if self.obs is None:
            self.obs = env.observation(env.state, env.last_action)
        self.rollout.detach_state()
        obs = self.obs.detach()
        self.actor.normalizer.update(obs)

        # a critic warm-up window builds no graph through the rollout: its actor loss is never differentiated
        with torch.set_grad_enabled(update_actor):
            obs_seen, rewards, dones, falls, value_obs, noises = [], [], [], [], [], []
            lin_err, yaw_err, terms_steps = [], [], []
            for _ in range(h):
                obs_seen.append(obs.detach())
                action = self.actor(obs)
                if self.action_noise_std > 0:
                    noise = torch.randn(action.shape, generator=self.gen, device=self.device)
                    action = action + noise * self.action_noise_std
                    noises.append(noise)
                obs, reward, done, info = self.rollout.step(action)
                rewards.append(reward)
                dones.append(done)
                falls.append(info["fell"])
                # the critic bootstraps from the observation before an automatic reset
                value_obs.append(torch.where(done.unsqueeze(-1), info["terminal_obs"], obs))
                lin_err.append(info["lin_vel_error"])
                yaw_err.append(info["yaw_rate_error"])
                terms_steps.append(info["terms"])
            rew, done_buf, fell_buf = torch.stack(rewards), torch.stack(dones), torch.stack(falls)  # (h, N)
            value_obs_buf = torch.stack(value_obs)  # (h, N, obs) with the rollout's graph

            # normaliser stays frozen within a window (it is updated on window starts only)
            with torch.no_grad():
                next_value_buf = self.target_critic(self.actor.normalizer(value_obs_buf))  # (h, N)
                next_value_buf = torch.where(fell_buf, 0.0, next_value_buf)  # no value after a fall
                # steps since the robot's episode segment began in this window
                since_start = torch.zeros(h, n, device=self.device)
                for t in range(1, h):
                    since_start[t] = torch.where(done_buf[t - 1], 0.0, since_start[t - 1] + 1)
                reward_discount = cfg.gamma**since_start
            # every segment ends at a done or the window end, where it is bootstrapped with the target critic;
            # the critic is evaluated with gradients only on those rows
            ends = done_buf.clone()
            ends[-1] = True
            ends &= ~fell_buf
            end_values = self.target_critic(self.actor.normalizer(value_obs_buf[ends]))
            actor_loss = -((reward_discount * rew).sum() + (cfg.gamma * reward_discount[ends] * end_values).sum())
            actor_loss = actor_loss / (n * h)
            return_loss = actor_loss.item()
            mirror_error_rad = math.nan
            if self.mirrors is not None:
                if cfg.symmetry > 0 and update_actor:
                    mirror_diff = mirror_difference(self.actor, torch.cat(obs_seen), *self.mirrors)
                    actor_loss = actor_loss + cfg.symmetry * mirror_diff.square().mean()
                else:  # a diagnostic only: the window's first observations
                    with torch.no_grad():
                        mirror_diff = mirror_difference(self.actor, obs_seen[0], *self.mirrors)
                mirror_error_rad = float((mirror_diff.detach() * self.action_scale).square().mean().sqrt())

        rew_buf = rew.detach()
        with torch_threads(cfg.update_threads):
            window_decay = self.rollout.decay
            grad_norm, skipped = math.nan, True  # a warm-up window: no backward pass through the rollout at all
            if update_actor:
                self.actor_opt.zero_grad(set_to_none=True)
                if cfg.zeroth_order_weight > 0:
                    self._mix_zeroth_order(actor_loss, torch.stack(obs_seen), torch.stack(noises), rew_buf,
                                           done_buf, next_value_buf)
                else:
                    actor_loss.backward()
                grad_norm = float(torch.nn.utils.clip_grad_norm_(self.actor.parameters(), cfg.grad_norm))
                skipped = self._is_gradient_spike(grad_norm)
                if not skipped:
                    self.actor_opt.step()
                self._adapt_gradient_decay(skipped)
            critic_loss = self._train_critic(torch.stack(obs_seen), rew_buf, done_buf, next_value_buf)
        self.obs = obs.detach()
        return IterationStats(
            actor_loss=return_loss,
            critic_loss=critic_loss,
            grad_norm=grad_norm,
            update_skipped=skipped,
            gradient_decay=window_decay,
            reward=float(rew_buf.mean()) / env.control_dt,
            lin_vel_error=float(torch.stack(lin_err).mean()),
            yaw_rate_error=float(torch.stack(yaw_err).mean()),
            fall_rate=float(fell_buf.sum()) / (n * h * env.control_dt),
            terms={k: float(sum(step[k] for step in terms_steps) / h) for k in terms_steps[0]},
            mirror_error_rad=mirror_error_rad,
            terrain_difficulty={k: float(v) for k, v in info.get("terrain_difficulty", {}).items()},
        )

    def _mix_zeroth_order(self, actor_loss, obs_buf, noise_buf, rew_buf, done_buf, next_value_buf) -> None:
        """Set the actor's gradients to the normalised mix of the first-order gradient of `actor_loss` and the
        likelihood-ratio one, sum_t A_t grad log pi(a_t | o_t): for Gaussian noise of std s around the mean action
        mu, grad log pi = (noise / s) grad mu, taken at the window's observations (no gradient through the dynamics).
        The first-order gradient sees only what the surrogate models; the likelihood ratio sees MuJoCo's rewards as
        they fell, falls and slips included, at a variance that shrinks with more robots."""
        params = [p for p in self.actor.parameters() if p.requires_grad]
        first = torch.autograd.grad(actor_loss, params, allow_unused=True)
        advantages = self._advantages(obs_buf, rew_buf, done_buf, next_value_buf)
        mean_action = self.actor(obs_buf.reshape(-1, obs_buf.shape[-1])).reshape(noise_buf.shape)
        # minimising this ascends sum_t A_t log pi(a_t | o_t)
        ratio_loss = -(advantages.unsqueeze(-1) * noise_buf / self.action_noise_std * mean_action).sum(-1).mean()
        zeroth = torch.autograd.grad(ratio_loss, params, allow_unused=True)
        first = [torch.zeros_like(p) if g is None else g for p, g in zip(params, first, strict=True)]
        zeroth = [torch.zeros_like(p) if g is None else g for p, g in zip(params, zeroth, strict=True)]
        norm_first = torch.sqrt(sum(g.square().sum() for g in first))
        norm_zeroth = torch.sqrt(sum(g.square().sum() for g in zeroth))
        w = self.cfg.zeroth_order_weight
        for p, g1, g0 in zip(params, first, zeroth, strict=True):
            p.grad = norm_first * ((1 - w) * g1 / norm_first.clamp_min(1e-12) + w * g0 / norm_zeroth.clamp_min(1e-12))

    @torch.no_grad()
    def _advantages(self, obs_buf, rew_buf, done_buf, next_value_buf) -> torch.Tensor:
        """(h, N) GAE(lambda) of the window, normalised to unit std: the critic's lambda-return targets minus the
        target critic's values (the two are the same recursion, cut at episode ends)."""
        values = self.target_critic(self.actor.normalizer(obs_buf))  # (h, N)
        advantages = self._td_lambda_targets(rew_buf, done_buf, next_value_buf) - values
        return (advantages - advantages.mean()) / advantages.std().clamp_min(1e-8)

    def _is_gradient_spike(self, grad_norm: float) -> bool:
        """True for a non-finite norm or one above `grad_spike_factor` x the running mean norm.

        Spikes enter the mean capped at the threshold, so norms that stay high are accepted after a few skips.
        """
        if not math.isfinite(grad_norm):
            return True
        mean, factor = self.grad_norm_mean, self.cfg.grad_spike_factor
        if mean is None:
            self.grad_norm_mean = grad_norm
            return False
        spike = factor > 0 and grad_norm > factor * mean
        self.grad_norm_mean = 0.95 * mean + 0.05 * (factor * mean if spike else grad_norm)
        return spike

    def _adapt_gradient_decay(self, spiked: bool) -> None:
        """Shrink the per-step gradient decay after a spike; let it grow back by 1 % per accepted update."""
        cfg = self.cfg
        if spiked:
            floor = min(cfg.min_gradient_decay, self.base_gradient_decay)
            self.rollout.decay = max(floor, self.rollout.decay * cfg.spike_decay_factor)
        else:
            self.rollout.decay = min(self.base_gradient_decay, self.rollout.decay / 0.99)

    def imitate_reference(self, iterations: int, epochs: int = 4) -> float:
        """Warm start: regress the actor onto the env's clock-driven reference action (IK of the foot reference).

        States come from rolling out the current actor (so the regression covers the states it
        visits); the label depends only on the gait clock and the command. Returns the last MSE.
        """
        env, cfg = self.rollout.env, self.cfg
        opt = torch.optim.Adam(self.actor.parameters(), lr=cfg.imitation_lr)
        loss_value = 0.0
        for _ in range(iterations):
            obs_list, ref_list = [], []
            obs = env.observation(env.state, env.last_action)
            for _ in range(cfg.horizon):
                with torch.no_grad():
                    obs_list.append(obs)
                    ref_list.append(env.reference_action())
                    obs, _, _, _ = env.step(self.actor(obs))
            obs_all, ref_all = torch.cat(obs_list), torch.cat(ref_list)
            self.actor.normalizer.update(obs_all)
            for _ in range(epochs):
                loss = ((self.actor(obs_all) - ref_all) ** 2).mean()
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
                loss_value = loss.item()
        self.obs = None
        return loss_value

    @torch.no_grad()
    def _td_lambda_targets(self, rew, done, next_value) -> torch.Tensor:
        cfg = self.cfg
        h = rew.shape[0]
        targets = torch.zeros_like(rew)
        running = next_value[h - 1]
        for t in reversed(range(h)):
            if t < h - 1:
                # blend the one-step bootstrap with the lambda-return of the next step, cut at episode ends
                running = torch.where(done[t], next_value[t], (1 - cfg.lam) * next_value[t] + cfg.lam * running)
            targets[t] = rew[t] + cfg.gamma * running
            running = targets[t]
        return targets

    def _train_critic(self, obs_buf, rew_buf, done_buf, next_value_buf) -> float:
        cfg = self.cfg
        targets = self._td_lambda_targets(rew_buf, done_buf, next_value_buf).reshape(-1)
        with torch.no_grad():
            x = self.actor.normalizer(obs_buf.reshape(-1, obs_buf.shape[-1]))
        total = x.shape[0]
        batch = max(1, total // cfg.critic_minibatches)
        last = 0.0
        for _ in range(cfg.critic_iterations):
            perm = torch.randperm(total, generator=self.gen, device=self.device)
            for i in range(cfg.critic_minibatches):
                idx = perm[i * batch : (i + 1) * batch]
                loss = ((self.critic(x[idx]) - targets[idx]) ** 2).mean()
                self.critic_opt.zero_grad(set_to_none=True)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(self.critic.parameters(), cfg.grad_norm)
                self.critic_opt.step()
                last = loss.item()
        with torch.no_grad():
            a = cfg.target_critic_alpha
            for p_t, p in zip(self.target_critic.parameters(), self.critic.parameters(), strict=True):
                p_t.mul_(a).add_((1 - a) * p)
        return last
