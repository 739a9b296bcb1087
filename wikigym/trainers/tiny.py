"""A tiny local chat model for tests, benchmarks and offline smoke runs.

:func:`build_tiny_model` writes, into one directory, everything ``from_pretrained`` needs:

- a byte-level BPE tokenizer trained here (``tokenizers``) on text the project generates: the
  default world's passages, the tool descriptions and schemas, the oracle trajectories of the
  default TaskSet rendered as chats, and Calc-v0 problems. It carries the Qwen special tokens
  (``<|im_start|>``, ``<|im_end|>``, ``<|endoftext|>``; ``<tool_call>``, ``</tool_call>``,
  ``<tool_response>``, ``</tool_response>``, ``<think>``, ``</think>`` as added non-special
  tokens, as in Qwen3, so they survive decoding and ``parse_response`` can find them) and TRL's
  Qwen3 chat template (``trl.chat_template_utils.qwen3_chat_template``, which renders tools), so
  TRL recognises it and ``add_response_schema`` makes tool calls parseable;
- a random-weight ``Qwen3ForCausalLM`` (2 layers, hidden size 64, tied embeddings), saved with
  ``save_pretrained``.

Options for a model that must copy names (``bench_learning_search``): ``texts`` trains the
tokenizer on your own text (a train world's chats) instead; ``space_words`` glues a word to the
space before it (GPT-2's pre-tokenization, ~25% fewer tokens than isolated spaces);
``prefix_preserving`` makes TRL's training version of the template the tokenizer's own, so a
chat renders with the same tokens in SFT, in evaluation and in GRPO's multi-turn rollouts.

Nothing is downloaded. The build is deterministic (same ``seed`` and options, same files) and
cached: a directory that already holds a complete build with the same recipe is returned as is.
Pass the directory *path* to TRL (with ``beta > 0`` it rebuilds the reference model from it).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wikigym.errors import WikigymError

if TYPE_CHECKING:
    from wikigym.trainers.progress import Progress

RECIPE_VERSION = 2  # 2: words, punctuation and spaces pre-tokenized apart
MARKER = "wikigym_tiny.json"
DEFAULT_HEAD_DIM = 16

SPECIAL_TOKENS: tuple[str, ...] = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")
"""Control tokens (special: dropped by ``decode(skip_special_tokens=True)``)."""

MARKUP_TOKENS: tuple[str, ...] = (
    "<tool_call>",
    "</tool_call>",
    "<tool_response>",
    "</tool_response>",
    "<think>",
    "</think>",
)
"""Tool and reasoning markup: single tokens, but kept in decoded text (as in Qwen3)."""


def _recipe(
    seed: int,
    vocab_size: int,
    hidden_size: int,
    num_layers: int,
    head_dim: int,
    text: TokenizerText,
) -> dict[str, int | str | bool]:
    recipe: dict[str, int | str | bool] = {
        "recipe_version": RECIPE_VERSION,
        "seed": seed,
        "vocab_size": vocab_size,
        "hidden_size": hidden_size,
        "num_layers": num_layers,
    }
    # Each option is recorded only when set, so the markers of older builds still match.
    if head_dim != DEFAULT_HEAD_DIM:
        recipe["head_dim"] = head_dim
    if text.texts is not None:
        recipe["texts_sha256"] = text.digest()
    if text.space_words:
        recipe["space_words"] = True
    if text.prefix_preserving:
        recipe["prefix_preserving"] = True
    return recipe


@dataclass(frozen=True)
class TokenizerText:
    """How the tokenizer is made (see the module docstring).

    Attributes:
        texts: Train the BPE on these texts (None: :func:`training_text`, the default world's).
        space_words: A word carries the space before it (GPT-2's pre-tokenization) instead of
            words, punctuation runs and spaces being tokens apart.
        prefix_preserving: The chat template is TRL's training version of Qwen3's, which keeps
            every assistant turn's think block, so a rendered chat is a prefix of its longer
            renderings.
    """

    texts: tuple[str, ...] | None = None
    space_words: bool = False
    prefix_preserving: bool = False

    def digest(self) -> str:
        """sha256 over ``texts`` (what the recipe records of them)."""
        h = hashlib.sha256()
        for t in self.texts or ():
            h.update(t.encode("utf-8"))
            h.update(b"\0")
        return h.hexdigest()


def build_tiny_model(
    out_dir: Path,
    *,
    seed: int = 0,
    vocab_size: int = 4096,
    hidden_size: int = 64,
    num_layers: int = 2,
    head_dim: int = DEFAULT_HEAD_DIM,
    text: TokenizerText | None = None,
    progress: Progress | None = None,
) -> Path:
    """Build (or reuse) the tiny model and tokenizer in ``out_dir``.

    Args:
        out_dir: Target directory; created atomically (built in a sibling, then renamed).
        seed: Seeds the weights (the tokenizer does not depend on it).
        vocab_size: BPE vocabulary size, special tokens included.
        hidden_size: Model width (a multiple of ``head_dim``).
        num_layers: Decoder layers.
        head_dim: Dimensions per attention head (wider heads learn to copy from the context
            sooner: the cold start's search agent copies names from the question and results).
        text: How the tokenizer is made (default: :class:`TokenizerText`'s defaults).
        progress: Where the tokenizer and model stages are announced (None: silent).

    Returns:
        ``out_dir``, a directory loadable by ``AutoModelForCausalLM.from_pretrained`` and
        ``AutoTokenizer.from_pretrained``.

    Raises:
        WikigymError: ``out_dir`` exists and holds something else (or another recipe).
        ValueError: On sizes that cannot make a model.
    """
    if head_dim < 8 or head_dim % 8:
        raise ValueError(f"head_dim must be a positive multiple of 8, got {head_dim}")
    if hidden_size < head_dim or hidden_size % head_dim:
        raise ValueError(
            f"hidden_size must be a positive multiple of head_dim {head_dim}, got {hidden_size}"
        )
    if num_layers < 1:
        raise ValueError(f"num_layers must be >= 1, got {num_layers}")
    if vocab_size < 512:
        raise ValueError(f"vocab_size must be >= 512 (256 bytes + merges), got {vocab_size}")
    out_dir = Path(out_dir)
    text = text or TokenizerText()
    recipe = _recipe(seed, vocab_size, hidden_size, num_layers, head_dim, text)
    marker = out_dir / MARKER
    if out_dir.exists():
        if marker.is_file():
            found = json.loads(marker.read_text(encoding="utf-8"))
            if found == recipe:
                return out_dir
            raise WikigymError(
                f"{out_dir} holds a tiny model built with {found}, not {recipe}; "
                "pass another directory or delete this one"
            )
        if any(out_dir.iterdir()):
            raise WikigymError(
                f"{out_dir} exists and is not a wikigym tiny-model directory; pass an empty or new directory"
            )
    tmp = out_dir.with_name(f".{out_dir.name}.building-{os.getpid()}")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    try:
        if progress is not None:
            progress.stage("tokenizer", f"training a {vocab_size}-token byte-level BPE")
        tokenizer = build_tokenizer(vocab_size, text)
        tokenizer.save_pretrained(tmp)
        if progress is not None:
            progress.done("tokenizer")
            progress.stage(
                "tiny model",
                f"{num_layers} layers, width {hidden_size}, random weights (seed {seed})",
            )
        _build_model(
            tokenizer,
            tmp,
            seed=seed,
            hidden_size=hidden_size,
            num_layers=num_layers,
            head_dim=head_dim,
        )
        (tmp / MARKER).write_text(json.dumps(recipe, sort_keys=True) + "\n", encoding="utf-8")
        if progress is not None:
            progress.done("tiny model")
        if out_dir.exists():
            out_dir.rmdir()  # empty (checked above)
        tmp.replace(out_dir)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)
    return out_dir


def training_text() -> Iterator[str]:
    """The text the tokenizer is trained on, in a fixed order (see the module docstring)."""
    from wikigym.envs.calc import CalcEnv
    from wikigym.tasks.defaults import default_resources
    from wikigym.tools import describe_tools, openai_tools_schema

    snapshot, tasks = default_resources(progress=False)
    yield describe_tools()
    yield json.dumps(openai_tools_schema(), ensure_ascii=False, sort_keys=True)
    rows = snapshot.sql("SELECT text FROM passages ORDER BY passage_id LIMIT 6000")
    yield from (str(t) for t in rows.column("text").to_pylist())
    for task in tasks:
        yield task.question
        for call in task.oracle:
            payload = {"name": call.name, "arguments": call.arguments}
            yield f"<tool_call>\n{json.dumps(payload, ensure_ascii=False)}\n</tool_call>"
    for level in (1, 2, 3):
        env = CalcEnv(level=level)
        for s in range(300):
            obs, _ = env.reset(seed=s)
            yield obs
    yield " ".join(str(i) for i in range(1000))


def build_tokenizer(
    vocab_size: int = 4096, text: TokenizerText | None = None
):  # -> PreTrainedTokenizerFast
    """Train the byte-level BPE tokenizer with the Qwen tokens and chat template."""
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast
    from trl.chat_template_utils import get_training_chat_template, qwen3_chat_template

    text = text or TokenizerText()
    tok = Tokenizer(models.BPE())
    if text.space_words:
        # GPT-2's regex: " Dekosk" is one pre-token. A name is then the same tokens wherever a
        # space precedes it (a question, a result, a Search-R1 tag written "<search> q </search>"),
        # and a chat is ~25% fewer tokens than with spaces apart.
        split: list[Any] = [pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)]
    else:
        # Words, runs of punctuation and single spaces are pre-tokens of their own: a name is
        # the same tokens after a space, a quote or a bracket, so copying it from a question or
        # a search result into a JSON call is a plain copy of tokens.
        split = [
            pre_tokenizers.Split(Regex(r"\w+|[^\w\s]+|\s"), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    # Digits one by one (as Qwen does): numbers are copied digit by digit, and arithmetic stays
    # learnable.
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [split[0], pre_tokenizers.Digits(individual_digits=True), *split[1:]]
        if not text.space_words
        else [pre_tokenizers.Digits(individual_digits=True), *split]
    )
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=2,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    corpus = training_text() if text.texts is None else iter(text.texts)
    tok.train_from_iterator(corpus, trainer=trainer)
    tok.add_tokens([AddedToken(t, special=False, normalized=False) for t in MARKUP_TOKENS])
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        unk_token=None,
        bos_token=None,
        model_max_length=8192,
        padding_side="left",
        clean_up_tokenization_spaces=False,
    )
    fast.chat_template = qwen3_chat_template
    if text.prefix_preserving:
        fast.chat_template = get_training_chat_template(fast)
    return fast


def _build_model(
    tokenizer, out: Path, *, seed: int, hidden_size: int, num_layers: int, head_dim: int
) -> None:
    import torch
    from transformers import GenerationConfig, Qwen3Config, Qwen3ForCausalLM

    heads = hidden_size // head_dim
    config = Qwen3Config(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        intermediate_size=hidden_size * 2,
        num_hidden_layers=num_layers,
        num_attention_heads=heads,
        # Grouped-query attention (half as many KV heads) only at the default head size.
        num_key_value_heads=max(1, heads // 2) if head_dim == DEFAULT_HEAD_DIM else heads,
        head_dim=head_dim,
        max_position_embeddings=8192,
        tie_word_embeddings=True,
        bos_token_id=None,
        eos_token_id=tokenizer.convert_tokens_to_ids("<|im_end|>"),
        pad_token_id=tokenizer.pad_token_id,
        dtype="float32",
    )
    torch.manual_seed(seed)
    model = Qwen3ForCausalLM(config)
    model.generation_config = GenerationConfig(
        eos_token_id=[
            tokenizer.convert_tokens_to_ids("<|im_end|>"),
            tokenizer.convert_tokens_to_ids("<|endoftext|>"),
        ],
        pad_token_id=tokenizer.pad_token_id,
        do_sample=True,
        temperature=1.0,
        top_p=1.0,
        top_k=0,
    )
    model.save_pretrained(out)


def directory_digest(path: Path) -> str:
    """sha256 over the names and bytes of the files of a directory (for determinism checks)."""
    h = hashlib.sha256()
    for f in sorted(p for p in Path(path).rglob("*") if p.is_file()):
        h.update(f.relative_to(path).as_posix().encode())
        h.update(b"\0")
        h.update(f.read_bytes())
    return h.hexdigest()
