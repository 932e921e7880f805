"""Every knob of a training run, declared and documented once.

The Hydra groups map one to one onto these dataclasses: ``trainer`` ->
:class:`TrainerConfig` (with ``trainer.sft`` -> :class:`SFTConfig` and
``trainer.curriculum`` -> :class:`CurriculumConfig`, ``trainer.monitoring``
-> :class:`MonitoringConfig`), ``model`` ->
:class:`ModelConfig`, ``policy`` -> :class:`PolicyConfig`, ``mixture`` ->
:class:`MixtureConfig`, ``schedule`` -> :class:`ScheduleConfig`, ``logging`` ->
:class:`LoggingConfig`, ``env_workers`` -> :class:`EnvWorkersConfig`. Each field
carries its documentation in ``metadata["help"]`` (as TRL's ``GRPOConfig``
does) and its valid range (``choices``, ``ge``, ``gt``, ``le``): these classes
are the one owner of every knob's type and range. Building one checks each
value against its type hint and range and raises
:class:`gym_llm.apps.hydra_app.ConfigError` naming the dotted key
(``trainer.total_steps: expected an integer, got 'abc'``); :func:`from_dict`
rejects unknown keys with a did-you-mean hint (:class:`UnknownKeyError`), so a
typo or a bad value in an override fails before the model loads.
:data:`RESUME_SAFE_KEYS` lists what a resumed run may change.
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from dataclasses import dataclass, field
from typing import Any

from gym_llm.apps.hydra_app import ConfigError, UnknownKeyError, unknown_key
from gym_llm.runtime.mixture import Mixture, expand_ids

__all__ = [
    "TrainerConfig", "SFTConfig", "CurriculumConfig", "MonitoringConfig", "ModelConfig", "LoraConfig",
    "PolicyConfig", "MixtureConfig", "EnvEntry", "ScheduleConfig", "LoggingConfig", "EnvWorkersConfig", "RunConfig",
    "from_dict", "store_defaults", "LOSS_AGG_MODES", "KL_ESTIMATORS", "RESUME_SAFE_KEYS",
    "ConfigError", "UnknownKeyError",
]

LOSS_AGG_MODES = ("token-mean", "seq-mean-token-mean", "seq-mean-token-sum-norm")
KL_ESTIMATORS = ("k1", "k2", "k3")


#: Keys a resumed run may change (``trainer.resume=auto`` compares the rest with
#: the run's recorded config and refuses on a difference): how long to train,
#: how often to evaluate and checkpoint, where metrics go. Changing
#: ``total_steps`` also stretches a cosine or linear learning-rate schedule.
#: A key ending in ``.*`` covers everything under it.
RESUME_SAFE_KEYS: tuple[str, ...] = (
    "trainer.total_steps", "trainer.resume", "trainer.eval_every", "trainer.eval_budget", "trainer.save_every",
    "trainer.keep_last",
    "trainer.monitoring.*", "logging.*", "output_dir",
)


def knob(default: Any, help: str, *, choices: tuple | None = None, ge: float | None = None,
         gt: float | None = None, le: float | None = None) -> Any:
    """A dataclass field with its documentation and valid range attached:
    one of ``choices``, or ``>= ge``, ``> gt``, ``<= le`` (``None`` is always
    allowed where the type hint allows it)."""
    meta = {"help": help, **{k: v for k, v in (("choices", choices), ("ge", ge), ("gt", gt), ("le", le))
                             if v is not None}}
    if isinstance(default, list | dict):
        return field(default_factory=lambda: type(default)(default), metadata=meta)
    return field(default=default, metadata=meta)


def sub(cls: type, help: str) -> Any:
    return field(default_factory=cls, metadata={"help": help})


_EXPECTED = {bool: "true or false", int: "an integer", float: "a number", str: "a string", list: "a list",
             dict: "a mapping"}


def _typed(value: Any, hint: Any) -> tuple[bool, Any]:
    """``(conforms, value)`` for a value of type hint ``hint``; an int given
    for a float knob becomes a float, a tuple for a list knob a list."""
    options = typing.get_args(hint) if isinstance(hint, types.UnionType) else (hint,)
    if value is None:
        return type(None) in options, value
    for t in options:
        if t is bool and isinstance(value, bool):
            return True, value
        if isinstance(value, bool):  # True is an int to Python, never to a config
            continue
        if t is int and isinstance(value, int):
            return True, value
        if t is float and isinstance(value, int | float):
            return True, float(value)
        if t is list and isinstance(value, list | tuple):
            return True, list(value)
        if t in (str, dict) and isinstance(value, t) or dataclasses.is_dataclass(t) and isinstance(value, t):
            return True, value
    return False, value


def _expected(hint: Any) -> str:
    options = typing.get_args(hint) if isinstance(hint, types.UnionType) else (hint,)
    names = [_EXPECTED.get(t) or f"a mapping of {t.__name__} keys" for t in options if t is not type(None)]
    return " or ".join(names) + (" or null" if type(None) in options else "")


def _checked(key: str, value: Any, hint: Any, meta: typing.Mapping[str, Any]) -> Any:
    """``value`` as knob ``key`` holds it, or :class:`ConfigError` saying what was expected."""
    ok, value = _typed(value, hint)
    if not ok:
        raise ConfigError(key, f"expected {_expected(hint)}, got {value!r}")
    if value is None or isinstance(value, bool):
        return value
    if "choices" in meta and value not in meta["choices"]:
        raise ConfigError(key, f"expected one of {' | '.join(map(str, meta['choices']))}, got {value!r}")
    for bound, fails, words in (("ge", lambda v, b: v < b, ">="), ("gt", lambda v, b: v <= b, ">"),
                                ("le", lambda v, b: v > b, "<=")):
        if bound in meta and fails(value, meta[bound]):
            raise ConfigError(key, f"must be {words} {meta[bound]}, got {value!r}")
    return value


class _Checked:
    """Checks every field against its type hint and its knob's range when
    the dataclass is built (keys relative to it; :func:`from_dict` prefixes
    the path of nested ones)."""

    def __post_init__(self) -> None:
        hints = _field_types(type(self))
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            setattr(self, f.name, _checked(f.name, getattr(self, f.name), hints[f.name], f.metadata))


@dataclass
class SFTConfig(_Checked):
    """Supervised warm start on reference answers of the train splits."""

    enabled: bool = knob(True, "Run the warm start before RL (skipped on resume).")
    examples_per_env: int = knob(
        256, "Train tasks per environment whose reference answer (task.answer rendered as a "
        "response the environment scores as correct) becomes an SFT example.", ge=0)
    epochs: float | None = knob(None, "Length of the warm start in passes over its examples (steps = "
                                      "epochs x examples / batch_size); null = the model's recommended "
                                      "model.sft_epochs. Batches mix the envs by the mixture's weights.", gt=0)
    batch_size: int = knob(32, "Sequences per SFT optimizer step.", ge=1)
    lr: float | None = knob(None, "SFT learning rate (AdamW, linear warmup then cosine decay); "
                                  "null = the model's recommended model.sft_lr.", gt=0)
    warmup_ratio: float = knob(0.05, "Fraction of SFT steps spent warming up the learning rate.", ge=0, le=1)
    weight_decay: float = knob(0.0, "AdamW weight decay of the warm start (a model trained from "
                                    "scratch on few examples generalises better with some).", ge=0)
    max_seq_tokens: int = knob(1024, "Longer examples are dropped (the warm start keeps memory flat).", ge=1)
    keep_optimizer_state: bool = knob(
        True, "Run the warm start on the RL optimizer (its trainer.adam_betas), so RL starts from its "
        "AdamW moments. A fresh Adam's first steps move every weight by the full learning rate "
        "whatever its gradient, which undoes much of a small model's warm start; false = a "
        "separate AdamW for the warm start.")


@dataclass
class CurriculumConfig(_Checked):
    """Per-environment difficulty control towards a target success rate."""

    enabled: bool = knob(False, "Adapt the `difficulty` kwarg of each procedural env.")
    target_success: float = knob(0.5, "Success rate (reward >= success_threshold) to steer towards.", ge=0, le=1)
    success_threshold: float = knob(1.0, "Reward at or above which an episode counts as a success.")
    window: int = knob(64, "Episodes per env in the moving success-rate window.", ge=1)
    step_size: float = knob(0.05, "Difficulty change per adjustment.", ge=0)
    tolerance: float = knob(0.1, "No change while |success - target| <= tolerance.", ge=0)
    min_difficulty: float = knob(0.0, "Lower bound of the difficulty.")
    max_difficulty: float = knob(1.0, "Upper bound of the difficulty.")


@dataclass
class MonitoringConfig(_Checked):
    """Reward-hacking monitors (gym_llm.runtime.monitoring, docs/monitoring.md): hack
    signals on every training episode, the strict grader on a sample, the alarm."""

    signals: bool = knob(True, "Detect every applicable hack signal on each training episode: "
                               "hacks/<env_id>/<signal> (fraction of the env's episodes of the step) "
                               "in metrics.jsonl, hack_signals in the trajectories.")
    alarm: str = knob("warn", "When a signal's fraction rises past its threshold: off | warn (a "
                              "warning in the log) | stop (checkpoint the step, then exit with "
                              "status 3; rerun to resume).", choices=("off", "warn", "stop"))
    thresholds: dict = knob({}, "Per-signal threshold overrides, signal name -> fraction in [0, 1] "
                                "(e.g. {multiple_boxes: 0.1}); others keep their plugin's default.")
    min_trajectories: int = knob(8, "An env with fewer episodes in a step is not measured by the "
                                    "alarm that step (a fraction of 2 of 3 is noise).", ge=1)
    patience: int = knob(1, "Measured steps in a row above the threshold before the alarm.", ge=1)
    strict_fraction: float = knob(0.05, "Share of each step's finished training episodes graded "
                                        "again by their env's strict grader (strict/<env_id>/mean, "
                                        "gap/<env_id>); graded in a background thread while the step "
                                        "trains. 0 disables.", ge=0, le=1)
    strict_min_per_env: int = knob(2, "At least this many episodes per env are strict-graded each "
                                      "step (when strict_fraction > 0), so small envs get a gap too.", ge=0)
    forgetting: str = knob("warn", "Forgetting alarm, when an env's or a domain's held-out reward, "
                                   "averaged over its last forgetting_window evals, falls more than "
                                   "forgetting_threshold below its best: off | log (an info line) | warn "
                                   "(a warning) | stop (checkpoint the step, then exit with status 3). "
                                   "Under schedule=adaptive (not off) the env's weight is also raised "
                                   "(schedule.forgetting_boost) until it recovers.",
                           choices=("off", "log", "warn", "stop"))
    forgetting_threshold: float = knob(0.1, "Drop of a held-out reward below its best that raises the "
                                            "forgetting alarm.", ge=0)
    forgetting_window: int = knob(2, "Evals of the env (or domain) averaged against its best (the "
                                     "alarm needs window + 1 of them).", ge=1)

    def __post_init__(self) -> None:
        super().__post_init__()
        for name, value in self.thresholds.items():
            _checked(f"thresholds.{name}", value, float, {"ge": 0, "le": 1})


@dataclass
class TrainerConfig(_Checked):
    """The RL algorithm (GRPO by default, PPO with ``algorithm=ppo``) and the run loop."""

    algorithm: str = knob("grpo", "grpo | ppo.", choices=("grpo", "ppo"))
    total_steps: int = knob(48, "RL updates (policy optimizer steps happen mu * num_minibatches times each).", ge=0)
    seed: int = knob(0, "Seed of everything: model init, task draws, sampling. Per-step randomness is "
                        "derived from (seed, step, rank), so a resumed run replays the same draws.")
    resume: str = knob("auto", "auto: continue the latest checkpoint of the run dir if any, when its "
                               "recorded config matches this one (RESUME_SAFE_KEYS may differ), else "
                               "refuse; force: continue it with this config anyway; never: start over; "
                               "or a checkpoint directory path.")
    # --- batch ---------------------------------------------------------------
    num_groups: int = knob(32, "Prompts (tasks) per step on each rank.", ge=1)
    group_size: int = knob(8, "Completions sampled per prompt (the GRPO group); 1 is fine for PPO.", ge=1)
    mu: int = knob(1, "Inner epochs over each rollout batch (PPO-style reuse).", ge=1)
    num_minibatches: int = knob(1, "Optimizer steps per epoch; the batch is split into this many.", ge=1)
    micro_batch_tokens: int = knob(8192, "Token budget of one forward/backward micro-batch: distinct "
                                         "prompts x longest prompt + responses x longest response "
                                         "(a group's shared prompt counts once); a long episode gets its "
                                         "own micro-batch.", ge=1)
    # --- optimizer -------------------------------------------------------------
    lr: float | None = knob(None, "Policy learning rate (AdamW); null = the model's recommended model.lr.", gt=0)
    weight_decay: float = knob(0.0, "AdamW weight decay.", ge=0)
    adam_betas: list = knob([0.9, 0.99], "AdamW betas.")
    warmup_steps: int = knob(5, "Linear learning-rate warmup, in RL steps (Adam's first steps move "
                                "every weight by the full learning rate, whatever its gradient).", ge=0)
    lr_schedule: str = knob("constant", "constant | cosine | linear (decay to 0 at total_steps).",
                             choices=("constant", "cosine", "linear"))
    max_grad_norm: float = knob(1.0, "Gradient clipping by global norm (0 disables).", ge=0)
    # --- policy loss -----------------------------------------------------------
    clip_eps_low: float = knob(0.2, "Ratio clip below: ratio >= 1 - clip_eps_low.", ge=0)
    clip_eps_high: float = knob(0.28, "Ratio clip above (clip-higher, DAPO): ratio <= 1 + clip_eps_high.", ge=0)
    dual_clip: float | None = knob(None, "Dual-clip constant c > 1: for negative advantages the "
                                         "loss is capped at -c * A (null disables).", gt=1)
    loss_agg: str = knob("token-mean", "token-mean | seq-mean-token-mean | seq-mean-token-sum-norm "
                                       "(Dr.GRPO: token sums divided by policy.max_new_tokens).", choices=LOSS_AGG_MODES)
    entropy_coef: float = knob(0.0, "Entropy bonus coefficient (loss -= coef * entropy).")
    kl_coef: float = knob(0.0, "KL coefficient to the frozen reference; 0 loads no reference model.", ge=0)
    kl_estimator: str = knob("k3", "k1 (log-ratio), k2 (squared log-ratio / 2) or k3 (Schulman's "
                                   "unbiased, always >= 0) estimator of KL(policy || ref).", choices=KL_ESTIMATORS)
    kl_in_reward: bool = knob(False, "Subtract kl_coef * KL from the reward (per token for PPO, summed "
                                     "per sequence for GRPO) instead of adding it to the loss.")
    # --- advantages / rewards --------------------------------------------------
    std_normalize: bool = knob(True, "Divide GRPO advantages by the group std (false = Dr.GRPO).")
    adv_eps: float = knob(1e-4, "Added to the group std before dividing.", ge=0)
    turn_credit: str = knob("episode", "GRPO on multi-turn episodes: episode (every policy token gets "
                                       "the episode's advantage) | turn (each turn is compared with the "
                                       "same turn of its group, by its return; see turn_discount).",
                             choices=("episode", "turn"))
    turn_discount: float = knob(1.0, "turn_credit=turn: weight of later turns' rewards in a turn's "
                                     "return (1 = everything after it counts, 0 = its own reward only, "
                                     "right for retry environments).", ge=0, le=1)
    dynamic_sampling: bool = knob(True, "Drop groups whose rewards are all equal (no signal) and "
                                        "sample more groups to refill the batch (DAPO).")
    max_refill_rounds: int = knob(1, "Extra rollout rounds dynamic sampling may spend per step.", ge=0)
    overlong_buffer: int = knob(0, "DAPO soft overlong penalty: a response whose policy-token count "
                                   "is within this many tokens of the limit loses up to "
                                   "overlong_penalty linearly (0 disables).", ge=0)
    overlong_penalty: float = knob(1.0, "Maximum overlong penalty (reached at the limit).", ge=0)
    truncated_turns: str = knob(
        "penalize", "An episode with a policy turn cut at its token limit (no end-of-turn token) "
        "was scored on an unfinished message, e.g. an answer followed by run-on text. penalize: "
        "the loss sees reward 0 for it (each turn), so running on is never reinforced; mask: it "
        "is left out of the batch (DAPO's overlong filtering); keep: the environment's reward.",
        choices=("penalize", "mask", "keep"))
    # --- off-policy correction -------------------------------------------------
    recompute_old_logprobs: bool = knob(False, "Recompute log-probs of the sampled tokens with the "
                                               "trainer before the update (pi_old). Needed when the "
                                               "engine's log-probs differ from the trainer's (vLLM, "
                                               "async, low precision); else the engine's are used. "
                                               "With one optimizer step per batch (mu=1, "
                                               "num_minibatches=1) the update's own forward gives "
                                               "them: no separate pass.")
    tis_cap: float | None = knob(2.0, "Truncated importance sampling: weight each token's loss by "
                                      "min(pi_old / pi_engine, tis_cap) (only when old log-probs are "
                                      "recomputed; null disables).", gt=0)
    async_rollout: bool = knob(False, "Generate step t+1 while step t trains (off-policy by at "
                                      "most max_staleness updates, corrected by the importance ratio).")
    max_staleness: int = knob(1, "Async: the policy that generated a batch is at most this many "
                                 "updates behind the one it trains.", ge=0)
    # --- PPO -------------------------------------------------------------------
    gamma: float = knob(1.0, "PPO discount over policy tokens.", ge=0, le=1)
    gae_lambda: float = knob(0.95, "PPO GAE lambda.", ge=0, le=1)
    value_clip: float = knob(0.2, "PPO value clipping range around the rollout-time value (0 disables).", ge=0)
    critic_lr: float = knob(1e-4, "PPO critic (value head model) learning rate.", gt=0)
    # --- eval / checkpoints ----------------------------------------------------
    eval_every: int = knob(8, "Held-out eval every N steps, and at step 0 (after the warm start) "
                               "and at the last step (0 disables).", ge=0)
    eval_tasks: int = knob(64, "Held-out tasks per environment per eval.", ge=1)
    eval_budget: int | None = knob(None, "Held-out episodes per eval (null = every env at every eval). "
                                         "With a budget the envs are cut, in mixture order, into K chunks "
                                         "of at most this many episodes, and each eval covers the next "
                                         "chunk, so every env is evaluated at least every K evals (K is "
                                         "logged as heldout/rotation); the evals at step 0 and at the "
                                         "last step cover all.", ge=1)
    eval_temperature: float = knob(1.0, "Sampling temperature of held-out evals (0 = greedy). The "
                                        "default, the rollout temperature, measures the policy being "
                                        "trained, comparable with reward/mean.", ge=0)
    eval_samples: int = knob(4, "Samples per held-out task (their mean reward; ignored when greedy). "
                                "Averaging over samples keeps the curve from jumping when one "
                                "answer's argmax flips.", ge=1)
    save_every: int = knob(10, "Checkpoint every N steps (and at the end).", ge=0)
    keep_last: int = knob(2, "Checkpoints kept; older ones are deleted.", ge=0)
    # --- groups ----------------------------------------------------------------
    sft: SFTConfig = sub(SFTConfig, "Warm start.")
    curriculum: CurriculumConfig = sub(CurriculumConfig, "Difficulty curriculum.")
    monitoring: MonitoringConfig = sub(MonitoringConfig, "Reward-hacking monitors and the strict grader.")

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.algorithm == "grpo" and self.group_size < 2:  # a group of one has no baseline
            raise ConfigError("group_size", f"GRPO compares completions of a prompt: must be >= 2 "
                                            f"(trainer=ppo takes 1), got {self.group_size}")
        if len(self.adam_betas) != 2 or not all(isinstance(b, int | float) and 0 <= b < 1 for b in self.adam_betas):
            raise ConfigError("adam_betas", f"expected two numbers in [0, 1), got {self.adam_betas!r}")


@dataclass
class LoraConfig(_Checked):
    """LoRA adapters through peft (the reference model is then the shared base)."""

    enabled: bool = knob(False, "Train LoRA adapters instead of all weights.")
    r: int = knob(16, "Adapter rank.", ge=1)
    alpha: int = knob(32, "Adapter scale numerator (scale = alpha / r).", gt=0)
    dropout: float = knob(0.0, "Adapter dropout.", ge=0, le=1)
    target_modules: list = knob(["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj",
                                 "down_proj"], "Module names to adapt.")


@dataclass
class ModelConfig(_Checked):
    """What to train: a local tiny model built on first use, or any checkpoint."""

    name: str = knob("tiny", "Short name, used in logs.")
    path: str | None = knob(None, "A Hugging Face id or local directory; null builds the tiny model.")
    tiny: dict = knob({}, "Keyword arguments of gym_llm.runtime.models' tiny builder (when path is null).")
    dtype: str = knob("float32", "Training dtype: float32 | bfloat16 | float16.",
                      choices=("float32", "bfloat16", "float16"))
    lr: float = knob(1e-6, "RL learning rate recommended for this model (used when trainer.lr is null).", gt=0)
    sft_lr: float = knob(1e-5, "Warm-start learning rate recommended for this model (trainer.sft.lr null).", gt=0)
    sft_epochs: float = knob(1.0, "Warm-start passes recommended for this model (trainer.sft.epochs null): "
                                  "a model trained from scratch needs many, a pretrained one few.", ge=0)
    ref_dtype: str = knob("bfloat16", "Reference model dtype when kl_coef > 0 and no LoRA (the "
                                      "reference only runs forward passes).", choices=("float32", "bfloat16", "float16"))
    ref_offload: bool = knob(False, "Keep the reference model on CPU between uses (GPU runs).")
    gradient_checkpointing: bool = knob(False, "Recompute activations in backward to save memory.")
    attn_implementation: str | None = knob(None, "sdpa | flash_attention_2 | eager (null = library default).")
    trust_remote_code: bool = knob(False, "Passed to from_pretrained.")
    lora: LoraConfig = sub(LoraConfig, "LoRA options.")


@dataclass
class PolicyConfig(_Checked):
    """How rollouts are generated (gym_llm.runtime.policies)."""

    backend: str = knob("hf", "hf (shares the training model) | vllm (colocated engine, weights "
                              "synced after each update).", choices=("hf", "vllm"))
    temperature: float = knob(1.0, "Sampling temperature of training rollouts.", ge=0)
    top_p: float = knob(1.0, "Nucleus sampling of training rollouts (1 = off, keeps the "
                             "importance ratio exact).", gt=0, le=1)
    max_new_tokens: int = knob(48, "Maximum tokens of one assistant turn.", ge=1)
    max_episode_tokens: int = knob(1024, "Maximum response tokens of a whole episode (policy and "
                                         "environment turns); longer episodes are truncated.", ge=1)
    max_batch_size: int = knob(256, "hf: most sequences decoded together. Every request samples "
                                    "with its own seed, but a batch's logits differ from one row's "
                                    "in the last bits (padding, product shapes), which rarely flips a "
                                    "sampled token: 1 makes a run replay bit for bit (resume, "
                                    "debugging) at the cost of speed.", ge=1)
    gpu_memory_utilization: float = knob(0.3, "vLLM: share of accelerator memory for the engine.", gt=0, le=1)
    vllm_kwargs: dict = knob({}, "Extra keyword arguments of the vLLM engine.")


@dataclass
class EnvEntry(_Checked):
    """One environment of a mixture."""

    id: str = knob("", "Registered environment id, e.g. math/Arithmetic-v0.")
    weight: float = knob(1.0, "Relative sampling weight (times the domain's weight).", ge=0)
    kwargs: dict = knob({}, "Keyword arguments for gym_llm.make (difficulty, max_turns, ...).")
    heldout_kwargs: dict = knob({}, "Overrides of kwargs for the held-out eval (default: the same).")
    sft_examples: int | None = knob(None, "Warm-start examples from this env (null = "
                                          "trainer.sft.examples_per_env).", ge=0)
    eval_tasks: int | None = knob(None, "Held-out tasks of this env per eval (null = trainer.eval_tasks).", ge=1)
    turn_credit: str | None = knob(None, "Multi-turn GRPO credit for this env (null = trainer.turn_credit).",
                                   choices=("episode", "turn"))
    turn_discount: float | None = knob(None, "Turn discount for this env (null = trainer.turn_discount); "
                                             "0 suits retry envs, where an attempt is judged on its own.", ge=0, le=1)


@dataclass
class MixtureConfig(_Checked):
    """Which environments to train on, and how often each is drawn."""

    name: str = knob("default", "Short name, used in logs.")
    envs: dict = knob({}, "name -> EnvEntry (a dict keyed by a short name so overrides such as "
                          "mixture.envs.arith.kwargs.difficulty=0.3 work).")
    weights: dict = knob({}, "domain -> weight multiplier (missing domains weigh 1.0), so "
                             "mixture.weights.math=0.2 sweeps a domain's share.")

    def __post_init__(self) -> None:
        super().__post_init__()
        for name, entry in self.envs.items():  # each entry is an EnvEntry: check it now, not at first use
            if not isinstance(entry, EnvEntry):
                try:
                    from_dict(EnvEntry, entry if isinstance(entry, dict) else {"id": entry})
                except ConfigError as e:
                    raise e.under(f"envs.{name}") from None
        for domain, w in self.weights.items():
            _checked(f"weights.{domain}", w, float, {"ge": 0})

    def entries(self) -> dict[str, EnvEntry]:
        """The environments as :class:`EnvEntry` objects, in declaration order. An
        entry whose id is a pattern (:func:`~gym_llm.runtime.mixture.expand_ids`:
        ``reasoning/*``, ``*``) is one entry per id it matches, named
        ``<name>:<id>``, each with the pattern entry's weight and settings."""
        out: dict[str, EnvEntry] = {}
        for k, v in self.envs.items():
            entry = v if isinstance(v, EnvEntry) else from_dict(EnvEntry, v)
            ids = expand_ids(entry.id)
            if ids == [entry.id]:
                out[k] = entry
            else:
                out.update({f"{k}:{i}": dataclasses.replace(entry, id=i) for i in ids})
        return out

    def mixture(self) -> Mixture:
        """The :class:`gym_llm.runtime.mixture.Mixture` of these entries (entry weight x
        domain weight, normalised; weight-0 entries left out). Ids are not
        looked up here: the run's ``imports`` may register them later."""
        entries = self.entries()
        return Mixture({k: e.weight for k, e in entries.items()}, env_ids={k: e.id for k, e in entries.items()},
                       domain_weights=self.weights, validate=False, name=self.name)

    def probabilities(self) -> dict[str, float]:
        """Short name -> normalised sampling probability (env weight x domain
        weight); environments of weight 0 are left out of the run entirely.
        Raises ``ValueError`` when no weight is positive."""
        return self.mixture().probabilities


@dataclass
class ScheduleConfig(_Checked):
    """How often each env of the mixture is drawn, step by step
    (:mod:`gym_llm.runtime.schedule`; the rule and its formula:
    docs/training.md#schedules-task-ratios-that-adapt). The adaptive knobs
    are fractions or multiples of an env's prior probability (its mixture
    weight x domain weight, normalised)."""

    kind: str = knob("static", "static: the mixture's weights at every step | adaptive: weights follow "
                               "each env's learning signal (the variance of its groups' rewards), with "
                               "the mixture's weights as the prior.", choices=("static", "adaptive"))
    temperature: float = knob(0.25, "adaptive: Boltzmann temperature over the scores (in [0, 1]): "
                                    "weight ~ prior x exp(score / temperature); larger is closer to "
                                    "the prior.", gt=0)
    ema: float = knob(0.3, "adaptive: weight of a step's learnability in an env's score (exponential "
                           "moving average over the steps that drew it).", gt=0, le=1)
    optimism: float = knob(1.0, "adaptive: score of an env before its first groups (1 = as learnable "
                                "as can be), so every env is tried.", ge=0)
    env_floor: float = knob(0.25, "adaptive: no env's probability falls below this fraction of its "
                                  "prior.", ge=0, le=1)
    domain_floor: float = knob(0.5, "adaptive: no domain's share falls below this fraction of its "
                                    "prior share (no domain drowned).", ge=0, le=1)
    env_cap: float = knob(4.0, "adaptive: no env's probability exceeds this multiple of its prior "
                               "(no env takes the batch).", ge=1)
    steered_floor: float = knob(1.0, "adaptive, with trainer.curriculum: an env the curriculum is "
                                     "still moving gets at least this fraction of its prior, so its "
                                     "success window fills.", ge=0, le=1)
    unsolved_cap: float = knob(1.0, "adaptive, with trainer.curriculum: an env at its hardest "
                                    "(max_difficulty) whose success rate is at most unsolved_success "
                                    "gets at most this multiple of its prior.", ge=1)
    unsolved_success: float = knob(0.05, "Success rate at or below which an env at its hardest counts "
                                         "as unsolved.", ge=0, le=1)
    forgetting_boost: float = knob(2.0, "adaptive: an env in a forgetting alarm (its own or its "
                                        "domain's; trainer.monitoring.forgetting) has its prior "
                                        "multiplied by this until it recovers.", ge=1)


@dataclass
class LoggingConfig(_Checked):
    """Where metrics go."""

    tensorboard: bool = knob(True, "Write TensorBoard event files to <run dir>/tensorboard.")
    wandb: bool = knob(False, "Log to Weights & Biases (needs `wandb` and a login).")
    wandb_project: str = knob("gym-llm", "W&B project.")
    mlflow: bool = knob(False, "Log to MLflow (needs `mlflow`; MLFLOW_TRACKING_URI honoured).")
    progress: bool = knob(True, "Show a rich progress bar with reward, KL and throughput.")
    plot: bool = knob(True, "Write reward_curve.png (train and held-out reward) to the run dir.")
    save_trajectories: bool = knob(True, "Write every step's trajectories to trajectories/step_*.jsonl.")
    trajectories_every: int = knob(1, "Write trajectories every N steps.", ge=1)


@dataclass
class EnvWorkersConfig(_Checked):
    """Where environment instances run (docs/scale-out.md). The ``env_workers``
    group (``conf/env_workers/local.yaml`` holds these defaults, ``ray.yaml``
    sets ``backend: ray``);
    :func:`gym_llm.runtime.distributed.workers.vec_kwargs` turns it into
    :func:`gym_llm.make_vec` arguments."""

    backend: str = knob("local", "local: in the trainer's process | ray: in Ray actors spread over the "
                                 "cluster's nodes (same tasks and rewards for the same seeds; sandboxes "
                                 "run on the node of their env).", choices=("local", "ray"))
    address: str | None = knob(None, "ray: the cluster to join (auto: the one this machine belongs to, "
                                     "from `ray start` or $RAY_ADDRESS; or host:port); null starts a "
                                     "local Ray in the trainer's process.")
    num_workers: int = knob(2, "ray: env worker actors; each hosts many env instances (async) and "
                               "episodes go to the least loaded one.", ge=1)
    num_cpus_per_worker: float = knob(1.0, "ray: CPUs each worker actor reserves (Ray's num_cpus; "
                                           "sandboxed code runs in jails beside it on its node).", ge=0)
    resources_per_worker: dict = knob({}, "ray: extra Ray resources each worker reserves, e.g. "
                                          "{env_node: 1} to keep workers on nodes started with "
                                          "--resources='{\"env_node\": 8}'.")
    sandbox_concurrency_per_node: int | None = knob(
        None, "ray: most sandboxed env steps running at once on one node, over all its workers "
              "(null = the node's CPUs).", ge=1)
    step_timeout_s: float | None = knob(
        120.0, "ray: deadline of each turn and reset on a worker; a turn past it is stopped and "
               "scored 0 (never dropped); a reset past it, or a worker or node that dies, re-runs "
               "the episode on a live worker from its task identity (null = no deadline: a hung "
               "step hangs the rollout).", gt=0)
    max_retries: int = knob(2, "ray: faults one call survives; past them the episode is an "
                               "environment error, dropped and counted as trajectories/env_lost.", ge=0)


@dataclass
class RunConfig(_Checked):
    """The whole training run (``conf/train.yaml``)."""

    trainer: TrainerConfig = sub(TrainerConfig, "Algorithm and loop.")
    model: ModelConfig = sub(ModelConfig, "Model.")
    policy: PolicyConfig = sub(PolicyConfig, "Generation.")
    mixture: MixtureConfig = sub(MixtureConfig, "Environments.")
    schedule: ScheduleConfig = sub(ScheduleConfig, "How often each environment is drawn, step by step.")
    logging: LoggingConfig = sub(LoggingConfig, "Metrics sinks.")
    env_workers: EnvWorkersConfig = sub(EnvWorkersConfig, "Where environment instances run.")
    sandbox: dict = knob({}, "Sandbox limits passed to environments that run code (conf/sandbox).")
    output_dir: str | None = knob(None, "Run directory (default: Hydra's run dir, else the cwd).")
    imports: list = knob([], "Modules imported before the environments are made, so environments "
                             "they register (gym_llm.register) can be trained on without packaging "
                             "them as a plugin, e.g. imports=[my_envs].")


#: Hydra group -> the dataclass whose defaults are that group's ``base`` option.
DEFAULTS_OF_GROUP: dict[str, type] = {"trainer": TrainerConfig, "logging": LoggingConfig,
                                      "schedule": ScheduleConfig}


def store_defaults() -> None:
    """Register each dataclass's defaults as the ``base`` option of its Hydra
    group (``trainer/base``, ``logging/base``) in Hydra's ConfigStore, so the
    YAML presets (``conf/trainer/grpo.yaml``, ...) hold only what they change
    and every default is written once, here. Plain dicts, not structured
    configs: OmegaConf cannot type ``X | None`` fields; :func:`from_dict`
    checks the keys. The ``model`` and ``policy`` groups stay whole YAML:
    ``gym-llm-eval`` composes them too, from a bare ``gym-llm`` install that
    has no trainers to register anything."""
    from hydra.core.config_store import ConfigStore

    store = ConfigStore.instance()
    for group, cls in DEFAULTS_OF_GROUP.items():
        store.store(group=group, name="base", node=dataclasses.asdict(cls()))


@functools.cache
def _field_types(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def from_dict(cls: type, data: dict[str, Any] | None) -> Any:
    """Build dataclass ``cls`` from a plain dict, recursing into nested
    dataclass fields. An unknown key raises :class:`UnknownKeyError` naming
    the closest declared one, a value of the wrong type or out of range
    :class:`ConfigError`; both are ``ValueError``s whose key is dotted from
    ``cls`` down (``sft.epochs``; ``run_config`` prefixes the group)."""
    data = dict(data or {})
    names = [f.name for f in dataclasses.fields(cls)]
    for k in data:
        if k not in names:
            raise unknown_key(k, names)
    hints = _field_types(cls)
    kwargs = {}
    for k, v in data.items():
        if dataclasses.is_dataclass(hints[k]) and isinstance(v, dict):
            try:
                v = from_dict(hints[k], v)
            except ConfigError as e:
                raise e.under(k) from None
        kwargs[k] = v
    return cls(**kwargs)
