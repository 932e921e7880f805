"""Every knob of a training run, declared and documented once.

The Hydra groups map one to one onto these dataclasses: ``trainer`` ->
:class:`TrainerConfig` (with ``trainer.sft`` -> :class:`SFTConfig` and
``trainer.curriculum`` -> :class:`CurriculumConfig`), ``model`` ->
:class:`ModelConfig`, ``policy`` -> :class:`PolicyConfig`, ``mixture`` ->
:class:`MixtureConfig`, ``logging`` -> :class:`LoggingConfig`. Each field
carries its documentation in ``metadata["help"]`` (as TRL's ``GRPOConfig``
does); :func:`from_dict` rejects unknown keys with a did-you-mean hint, so a
typo in an override fails before the model loads.
"""

from __future__ import annotations

import dataclasses
import difflib
import typing
from dataclasses import dataclass, field
from typing import Any

from gym_llm.mixture import Mixture

__all__ = [
    "TrainerConfig", "SFTConfig", "CurriculumConfig", "ModelConfig", "LoraConfig",
    "PolicyConfig", "MixtureConfig", "EnvEntry", "LoggingConfig", "RunConfig",
    "from_dict", "store_defaults", "LOSS_AGG_MODES", "KL_ESTIMATORS",
]

LOSS_AGG_MODES = ("token-mean", "seq-mean-token-mean", "seq-mean-token-sum-norm")
KL_ESTIMATORS = ("k1", "k2", "k3")


def knob(default: Any, help: str, **kw: Any) -> Any:
    """A dataclass field with its documentation attached."""
    if isinstance(default, list | dict):
        return field(default_factory=lambda: type(default)(default), metadata={"help": help}, **kw)
    return field(default=default, metadata={"help": help}, **kw)


def sub(cls: type, help: str) -> Any:
    return field(default_factory=cls, metadata={"help": help})


@dataclass
class SFTConfig:
    """Supervised warm start on reference answers of the train splits."""

    enabled: bool = knob(True, "Run the warm start before RL (skipped on resume).")
    examples_per_env: int = knob(
        256, "Train tasks per environment whose reference answer (task.answer rendered as a "
        "response the environment scores as correct) becomes an SFT example.")
    epochs: float | None = knob(None, "Length of the warm start in passes over its examples (steps = "
                                      "epochs x examples / batch_size); null = the model's recommended "
                                      "model.sft_epochs. Batches mix the envs by the mixture's weights.")
    batch_size: int = knob(32, "Sequences per SFT optimizer step.")
    lr: float | None = knob(None, "SFT learning rate (AdamW, linear warmup then cosine decay); "
                                  "null = the model's recommended model.sft_lr.")
    warmup_ratio: float = knob(0.05, "Fraction of SFT steps spent warming up the learning rate.")
    weight_decay: float = knob(0.0, "AdamW weight decay of the warm start (a model trained from "
                                    "scratch on few examples generalises better with some).")
    max_seq_tokens: int = knob(1024, "Longer examples are dropped (the warm start keeps memory flat).")
    keep_optimizer_state: bool = knob(
        True, "Run the warm start on the RL optimizer (its trainer.adam_betas), so RL starts from its "
        "AdamW moments. A fresh Adam's first steps move every weight by the full learning rate "
        "whatever its gradient, which undoes much of a small model's warm start; false = a "
        "separate AdamW for the warm start.")


@dataclass
class CurriculumConfig:
    """Per-environment difficulty control towards a target success rate."""

    enabled: bool = knob(False, "Adapt the `difficulty` kwarg of each procedural env.")
    target_success: float = knob(0.5, "Success rate (reward >= success_threshold) to steer towards.")
    success_threshold: float = knob(1.0, "Reward at or above which an episode counts as a success.")
    window: int = knob(64, "Episodes per env in the moving success-rate window.")
    step_size: float = knob(0.05, "Difficulty change per adjustment.")
    tolerance: float = knob(0.1, "No change while |success - target| <= tolerance.")
    min_difficulty: float = knob(0.0, "Lower bound of the difficulty.")
    max_difficulty: float = knob(1.0, "Upper bound of the difficulty.")


@dataclass
class TrainerConfig:
    """The RL algorithm (GRPO by default, PPO with ``algorithm=ppo``) and the run loop."""

    algorithm: str = knob("grpo", "grpo | ppo.")
    total_steps: int = knob(48, "RL updates (policy optimizer steps happen mu * num_minibatches times each).")
    seed: int = knob(0, "Seed of everything: model init, task draws, sampling. Per-step randomness is "
                        "derived from (seed, step, rank), so a resumed run replays the same draws.")
    resume: str = knob("auto", "auto: continue the latest checkpoint of the run dir if any; never; "
                               "or a checkpoint directory path.")
    # --- batch ---------------------------------------------------------------
    num_groups: int = knob(32, "Prompts (tasks) per step on each rank.")
    group_size: int = knob(8, "Completions sampled per prompt (the GRPO group); 1 is fine for PPO.")
    mu: int = knob(1, "Inner epochs over each rollout batch (PPO-style reuse).")
    num_minibatches: int = knob(1, "Optimizer steps per epoch; the batch is split into this many.")
    micro_batch_tokens: int = knob(8192, "Token budget of one forward/backward micro-batch: distinct "
                                         "prompts x longest prompt + responses x longest response "
                                         "(a group's shared prompt counts once); a long episode gets its "
                                         "own micro-batch.")
    # --- optimizer -------------------------------------------------------------
    lr: float | None = knob(None, "Policy learning rate (AdamW); null = the model's recommended model.lr.")
    weight_decay: float = knob(0.0, "AdamW weight decay.")
    adam_betas: list = knob([0.9, 0.99], "AdamW betas.")
    warmup_steps: int = knob(5, "Linear learning-rate warmup, in RL steps (Adam's first steps move "
                                "every weight by the full learning rate, whatever its gradient).")
    lr_schedule: str = knob("constant", "constant | cosine | linear (decay to 0 at total_steps).")
    max_grad_norm: float = knob(1.0, "Gradient clipping by global norm (0 disables).")
    # --- policy loss -----------------------------------------------------------
    clip_eps_low: float = knob(0.2, "Ratio clip below: ratio >= 1 - clip_eps_low.")
    clip_eps_high: float = knob(0.28, "Ratio clip above (clip-higher, DAPO): ratio <= 1 + clip_eps_high.")
    dual_clip: float | None = knob(None, "Dual-clip constant c > 1: for negative advantages the "
                                         "loss is capped at -c * A (null disables).")
    loss_agg: str = knob("token-mean", "token-mean | seq-mean-token-mean | seq-mean-token-sum-norm "
                                       "(Dr.GRPO: token sums divided by policy.max_new_tokens).")
    entropy_coef: float = knob(0.0, "Entropy bonus coefficient (loss -= coef * entropy).")
    kl_coef: float = knob(0.0, "KL coefficient to the frozen reference; 0 loads no reference model.")
    kl_estimator: str = knob("k3", "k1 (log-ratio), k2 (squared log-ratio / 2) or k3 (Schulman's "
                                   "unbiased, always >= 0) estimator of KL(policy || ref).")
    kl_in_reward: bool = knob(False, "Subtract kl_coef * KL from the reward (per token for PPO, summed "
                                     "per sequence for GRPO) instead of adding it to the loss.")
    # --- advantages / rewards --------------------------------------------------
    std_normalize: bool = knob(True, "Divide GRPO advantages by the group std (false = Dr.GRPO).")
    adv_eps: float = knob(1e-4, "Added to the group std before dividing.")
    turn_credit: str = knob("episode", "GRPO on multi-turn episodes: episode (every policy token gets "
                                       "the episode's advantage) | turn (each turn is compared with the "
                                       "same turn of its group, by its return; see turn_discount).")
    turn_discount: float = knob(1.0, "turn_credit=turn: weight of later turns' rewards in a turn's "
                                     "return (1 = everything after it counts, 0 = its own reward only, "
                                     "right for retry environments).")
    dynamic_sampling: bool = knob(True, "Drop groups whose rewards are all equal (no signal) and "
                                        "sample more groups to refill the batch (DAPO).")
    max_refill_rounds: int = knob(1, "Extra rollout rounds dynamic sampling may spend per step.")
    overlong_buffer: int = knob(0, "DAPO soft overlong penalty: a response whose policy-token count "
                                   "is within this many tokens of the limit loses up to "
                                   "overlong_penalty linearly (0 disables).")
    overlong_penalty: float = knob(1.0, "Maximum overlong penalty (reached at the limit).")
    truncated_turns: str = knob(
        "penalize", "An episode with a policy turn cut at its token limit (no end-of-turn token) "
        "was scored on an unfinished message, e.g. an answer followed by run-on text. penalize: "
        "the loss sees reward 0 for it (each turn), so running on is never reinforced; mask: it "
        "is left out of the batch (DAPO's overlong filtering); keep: the environment's reward.")
    # --- off-policy correction -------------------------------------------------
    recompute_old_logprobs: bool = knob(False, "Recompute log-probs of the sampled tokens with the "
                                               "trainer before the update (pi_old). Needed when the "
                                               "engine's log-probs differ from the trainer's (vLLM, "
                                               "async, low precision); else the engine's are used.")
    tis_cap: float | None = knob(2.0, "Truncated importance sampling: weight each token's loss by "
                                      "min(pi_old / pi_engine, tis_cap) (only when old log-probs are "
                                      "recomputed; null disables).")
    async_rollout: bool = knob(False, "Generate step t+1 while step t trains (off-policy by at "
                                      "most max_staleness updates, corrected by the importance ratio).")
    max_staleness: int = knob(1, "Async: the policy that generated a batch is at most this many "
                                 "updates behind the one it trains.")
    # --- PPO -------------------------------------------------------------------
    gamma: float = knob(1.0, "PPO discount over policy tokens.")
    gae_lambda: float = knob(0.95, "PPO GAE lambda.")
    value_clip: float = knob(0.2, "PPO value clipping range around the rollout-time value (0 disables).")
    critic_lr: float = knob(1e-4, "PPO critic (value head model) learning rate.")
    # --- eval / checkpoints ----------------------------------------------------
    eval_every: int = knob(8, "Held-out eval every N steps, and at step 0 (after the warm start) "
                               "and at the last step (0 disables).")
    eval_tasks: int = knob(64, "Held-out tasks per environment per eval.")
    eval_temperature: float = knob(1.0, "Sampling temperature of held-out evals (0 = greedy). The "
                                        "default, the rollout temperature, measures the policy being "
                                        "trained, comparable with reward/mean.")
    eval_samples: int = knob(4, "Samples per held-out task (their mean reward; ignored when greedy). "
                                "Averaging over samples keeps the curve from jumping when one "
                                "answer's argmax flips.")
    save_every: int = knob(10, "Checkpoint every N steps (and at the end).")
    keep_last: int = knob(2, "Checkpoints kept; older ones are deleted.")
    # --- groups ----------------------------------------------------------------
    sft: SFTConfig = sub(SFTConfig, "Warm start.")
    curriculum: CurriculumConfig = sub(CurriculumConfig, "Difficulty curriculum.")

    def __post_init__(self) -> None:
        checks = {
            "algorithm": self.algorithm in ("grpo", "ppo"),
            "loss_agg": self.loss_agg in LOSS_AGG_MODES,
            "kl_estimator": self.kl_estimator in KL_ESTIMATORS,
            "lr_schedule": self.lr_schedule in ("constant", "cosine", "linear"),
            "turn_credit": self.turn_credit in ("episode", "turn"),
            "truncated_turns": self.truncated_turns in ("penalize", "mask", "keep"),
            "group_size": self.group_size >= 1 and (self.algorithm == "ppo" or self.group_size >= 2),
            "mu": self.mu >= 1,
            "num_minibatches": self.num_minibatches >= 1,
            "dual_clip": self.dual_clip is None or self.dual_clip > 1.0,
            "max_staleness": self.max_staleness >= 0,
        }
        bad = [k for k, ok in checks.items() if not ok]
        if bad:
            raise ValueError("invalid trainer config values: " + ", ".join(f"{k}={getattr(self, k)!r}" for k in bad))


@dataclass
class LoraConfig:
    """LoRA adapters through peft (the reference model is then the shared base)."""

    enabled: bool = knob(False, "Train LoRA adapters instead of all weights.")
    r: int = knob(16, "Adapter rank.")
    alpha: int = knob(32, "Adapter scale numerator (scale = alpha / r).")
    dropout: float = knob(0.0, "Adapter dropout.")
    target_modules: list = knob(["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj",
                                 "down_proj"], "Module names to adapt.")


@dataclass
class ModelConfig:
    """What to train: a local tiny model built on first use, or any checkpoint."""

    name: str = knob("tiny", "Short name, used in logs.")
    path: str | None = knob(None, "A Hugging Face id or local directory; null builds the tiny model.")
    tiny: dict = knob({}, "Keyword arguments of gym_llm.models' tiny builder (when path is null).")
    dtype: str = knob("float32", "Training dtype: float32 | bfloat16 | float16.")
    lr: float = knob(1e-6, "RL learning rate recommended for this model (used when trainer.lr is null).")
    sft_lr: float = knob(1e-5, "Warm-start learning rate recommended for this model (trainer.sft.lr null).")
    sft_epochs: float = knob(1.0, "Warm-start passes recommended for this model (trainer.sft.epochs null): "
                                  "a model trained from scratch needs many, a pretrained one few.")
    ref_dtype: str = knob("bfloat16", "Reference model dtype when kl_coef > 0 and no LoRA (the "
                                      "reference only runs forward passes).")
    ref_offload: bool = knob(False, "Keep the reference model on CPU between uses (GPU runs).")
    gradient_checkpointing: bool = knob(False, "Recompute activations in backward to save memory.")
    attn_implementation: str | None = knob(None, "sdpa | flash_attention_2 | eager (null = library default).")
    trust_remote_code: bool = knob(False, "Passed to from_pretrained.")
    lora: LoraConfig = sub(LoraConfig, "LoRA options.")


@dataclass
class PolicyConfig:
    """How rollouts are generated (gym_llm.policies)."""

    backend: str = knob("hf", "hf (shares the training model) | vllm (colocated engine, weights "
                              "synced after each update).")
    temperature: float = knob(1.0, "Sampling temperature of training rollouts.")
    top_p: float = knob(1.0, "Nucleus sampling of training rollouts (1 = off, keeps the "
                             "importance ratio exact).")
    max_new_tokens: int = knob(48, "Maximum tokens of one assistant turn.")
    max_episode_tokens: int = knob(1024, "Maximum response tokens of a whole episode (policy and "
                                         "environment turns); longer episodes are truncated.")
    max_batch_size: int = knob(256, "hf: most sequences decoded together. Sampling draws from one "
                                    "seeded generator, so which rows share a decoding step decides "
                                    "the samples: 1 makes a run replay exactly (resume, debugging) "
                                    "at the cost of speed.")
    gpu_memory_utilization: float = knob(0.3, "vLLM: share of accelerator memory for the engine.")
    vllm_kwargs: dict = knob({}, "Extra keyword arguments of the vLLM engine.")


@dataclass
class EnvEntry:
    """One environment of a mixture."""

    id: str = knob("", "Registered environment id, e.g. math/Arithmetic-v0.")
    weight: float = knob(1.0, "Relative sampling weight (times the domain's weight).")
    kwargs: dict = knob({}, "Keyword arguments for gym_llm.make (difficulty, max_turns, ...).")
    heldout_kwargs: dict = knob({}, "Overrides of kwargs for the held-out eval (default: the same).")
    sft_examples: int | None = knob(None, "Warm-start examples from this env (null = "
                                          "trainer.sft.examples_per_env).")
    eval_tasks: int | None = knob(None, "Held-out tasks of this env per eval (null = trainer.eval_tasks).")
    turn_credit: str | None = knob(None, "Multi-turn GRPO credit for this env (null = trainer.turn_credit).")
    turn_discount: float | None = knob(None, "Turn discount for this env (null = trainer.turn_discount); "
                                             "0 suits retry envs, where an attempt is judged on its own.")


@dataclass
class MixtureConfig:
    """Which environments to train on, and how often each is drawn."""

    name: str = knob("default", "Short name, used in logs.")
    envs: dict = knob({}, "name -> EnvEntry (a dict keyed by a short name so overrides such as "
                          "mixture.envs.arith.kwargs.difficulty=0.3 work).")
    weights: dict = knob({}, "domain -> weight multiplier (missing domains weigh 1.0), so "
                             "mixture.weights.math=0.2 sweeps a domain's share.")

    def entries(self) -> dict[str, EnvEntry]:
        """The environments as :class:`EnvEntry` objects, in declaration order."""
        return {k: v if isinstance(v, EnvEntry) else from_dict(EnvEntry, v) for k, v in self.envs.items()}

    def mixture(self) -> Mixture:
        """The :class:`gym_llm.mixture.Mixture` of these entries (entry weight x
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
class LoggingConfig:
    """Where metrics go."""

    tensorboard: bool = knob(True, "Write TensorBoard event files to <run dir>/tensorboard.")
    wandb: bool = knob(False, "Log to Weights & Biases (needs `wandb` and a login).")
    wandb_project: str = knob("gym-llm", "W&B project.")
    mlflow: bool = knob(False, "Log to MLflow (needs `mlflow`; MLFLOW_TRACKING_URI honoured).")
    progress: bool = knob(True, "Show a rich progress bar with reward, KL and throughput.")
    plot: bool = knob(True, "Write reward_curve.png (train and held-out reward) to the run dir.")
    save_trajectories: bool = knob(True, "Write every step's trajectories to trajectories/step_*.jsonl.")
    trajectories_every: int = knob(1, "Write trajectories every N steps.")


@dataclass
class RunConfig:
    """The whole training run (``conf/train.yaml``)."""

    trainer: TrainerConfig = sub(TrainerConfig, "Algorithm and loop.")
    model: ModelConfig = sub(ModelConfig, "Model.")
    policy: PolicyConfig = sub(PolicyConfig, "Generation.")
    mixture: MixtureConfig = sub(MixtureConfig, "Environments.")
    logging: LoggingConfig = sub(LoggingConfig, "Metrics sinks.")
    sandbox: dict = knob({}, "Sandbox limits passed to environments that run code (conf/sandbox).")
    output_dir: str | None = knob(None, "Run directory (default: Hydra's run dir, else the cwd).")
    imports: list = knob([], "Modules imported before the environments are made, so environments "
                             "they register (gym_llm.register) can be trained on without packaging "
                             "them as a plugin, e.g. imports=[my_envs].")


#: Hydra group -> the dataclass whose defaults are that group's ``base`` option.
DEFAULTS_OF_GROUP: dict[str, type] = {"trainer": TrainerConfig, "logging": LoggingConfig}


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


def _field_types(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def from_dict(cls: type, data: dict[str, Any] | None) -> Any:
    """Build dataclass ``cls`` from a plain dict, recursing into nested
    dataclass fields. Unknown keys raise ``KeyError`` naming close matches."""
    data = dict(data or {})
    names = {f.name: f for f in dataclasses.fields(cls)}
    unknown = [k for k in data if k not in names]
    if unknown:
        hints = []
        for k in unknown:
            close = difflib.get_close_matches(k, list(names), n=1)
            hints.append(f"{k!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
        raise KeyError(f"unknown {cls.__name__} keys: {', '.join(hints)}")
    types = _field_types(cls)
    kwargs = {}
    for k, v in data.items():
        t = types[k]
        if dataclasses.is_dataclass(t) and isinstance(v, dict):
            v = from_dict(t, v)
        kwargs[k] = v
    return cls(**kwargs)
