"""Content that reads like an instruction to the agent goes to moderation instead of the prompt."""

import re

_PATTERNS = [
    r"\b(ignore|disregard|forget|override)\b.{0,40}\b(previous|prior|above|earlier|all|any|your)\b.{0,20}"
    r"\b(instructions?|prompts?|rules?|guidelines?|directions?)\b",
    r"\byou are now\b",
    r"\b(system|developer)\s*prompt\b",
    r"\bact as (an? )?(unrestricted|jailbroken|dan)\b",
    r"\bdo anything now\b",
    r"\breveal (your|the) (instructions|prompt|secrets?|api key)\b",
    r"\bnew instructions?\s*:",
    r"</?\s*(system|assistant)\s*>",
    r"忽略(之前|以上|所有|先前).{0,6}(指令|指示|规则|提示)",
    r"(无视|忘记)(之前|以上|所有).{0,6}(指令|规则|提示)",
    r"你现在是",
    r"系统提示",
]
_INSTRUCTION = re.compile("|".join(f"(?:{p})" for p in _PATTERNS), re.IGNORECASE | re.DOTALL)


def looks_like_instruction(text: str) -> bool:
    return bool(_INSTRUCTION.search(text))
