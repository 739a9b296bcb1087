"""An agent running a local transformers causal LM (torch and transformers imported lazily).

Each turn renders the conversation with the tokenizer's chat template and the env's tools
(``apply_chat_template(messages, tools=openai_tools_schema(), add_generation_prompt=True)``),
generates greedily (deterministic on a given machine) and returns the decoded text as the
action; the env parses ``<tool_call>`` JSON out of it. The observation after a reply that
holds a tool call goes back as a ``tool`` message, any other as a ``user`` message. Prompts
longer than the model's context keep their most recent tokens.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from wikigym.envs.results import StepOutput
from wikigym.errors import EvalError
from wikigym.tasks.taskset import Task
from wikigym.tools import openai_tools_schema

_TOOL_CALL = re.compile(r"<tool_call>.*?</tool_call>", re.DOTALL)


class HFAgent:
    """Local model agent.

    Args:
        path: A directory loadable by ``AutoModelForCausalLM``/``AutoTokenizer``.
        seed: Seeds torch before each episode (pins the samples when ``temperature > 0``).
        max_new_tokens: Generation budget per turn.
        temperature: 0 for greedy decoding (the default), else sampling at this temperature.
        device: Torch device (default: ``cuda`` when available, else ``cpu``).
    """

    privileged = False

    def __init__(
        self,
        path: str | Path,
        *,
        seed: int = 0,
        max_new_tokens: int = 512,
        temperature: float = 0.0,
        device: str | None = None,
    ) -> None:
        try:
            import torch
            from transformers import AutoModelForCausalLM, AutoTokenizer
        except ImportError as exc:
            raise EvalError(
                f"the hf agent needs torch and transformers ({exc}); "
                "install them with: pip install torch transformers"
            ) from exc
        path = Path(path)
        if not path.is_dir():
            raise EvalError(f"hf agent: {path} is not a model directory (expected hf:PATH)")
        self.name = f"hf:{path}"
        self.seed = seed
        self.max_new_tokens = max_new_tokens
        if temperature < 0:
            raise EvalError(f"hf agent: temperature must be >= 0, got {temperature}")
        self.temperature = temperature
        self._torch = torch
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        try:
            # transformers' own annotations do not follow these dynamic classes: Any.
            self.tokenizer: Any = AutoTokenizer.from_pretrained(path)
            model: Any = AutoModelForCausalLM.from_pretrained(path)
            self.model: Any = model.to(self.device)
        except (OSError, ValueError) as exc:
            raise EvalError(f"hf agent: cannot load a model from {path}: {exc}") from exc
        if getattr(self.tokenizer, "chat_template", None) is None:
            raise EvalError(f"hf agent: the tokenizer in {path} has no chat template")
        self.model.eval()
        self._tools: list[Any] = list(openai_tools_schema())
        self._messages: list[dict[str, Any]] = []
        self._last_had_call = False
        self._turn = 0
        config = self.model.config
        self._context = int(getattr(config, "max_position_embeddings", 0) or 0)

    def reset(self, task_prompt: str, task: Task | None) -> None:
        self._messages = [{"role": "user", "content": task_prompt}]
        self._last_had_call = False
        self._turn = 0
        self._torch.manual_seed(self.seed)

    def act(self, observation: str, outputs: Sequence[StepOutput] = ()) -> str:
        if self._turn > 0:
            role = "tool" if self._last_had_call else "user"
            self._messages.append({"role": role, "content": observation})
        self._turn += 1
        text = self._generate()
        self._last_had_call = bool(_TOOL_CALL.search(text))
        self._messages.append({"role": "assistant", "content": text})
        return text

    def _generate(self) -> str:
        torch = self._torch
        ids: Any = self.tokenizer.apply_chat_template(
            self._messages,
            tools=self._tools,
            add_generation_prompt=True,
            tokenize=True,
            return_dict=True,
            return_tensors="pt",
        )["input_ids"]
        if self._context:
            keep = max(self._context - self.max_new_tokens, 1)
            ids = ids[:, -keep:]
        ids = ids.to(self.device)
        pad = self.tokenizer.pad_token_id
        if pad is None:
            pad = self.tokenizer.eos_token_id
        sampling: dict[str, Any] = {"do_sample": False}
        if self.temperature > 0:
            sampling = {"do_sample": True, "temperature": self.temperature, "top_k": 0}
        with torch.no_grad():
            out = self.model.generate(
                ids,
                attention_mask=torch.ones_like(ids),
                max_new_tokens=self.max_new_tokens,
                **sampling,
                pad_token_id=pad,
            )
        # Keep markup like <tool_call> (added tokens), drop control tokens (<|im_end|>).
        return self.tokenizer.decode(out[0, ids.shape[1] :], skip_special_tokens=True).strip()
