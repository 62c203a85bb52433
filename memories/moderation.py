"""The one moderation service: text that reads like an instruction to the agent is held for review.

Every write path (REST create and PATCH, import, the MEMORY.md editor, extraction, tools, MCP,
Telegram) stores memories through `memory_create` / `memory_update`, and both ask `moderation_check`
here, so a new path cannot forget it. Detection runs on a folded copy of the text (the stored text
is never changed): NFKC turns fullwidth and other compatibility forms into plain letters
("Ｉｇｎｏｒｅ" → "Ignore", "：" → ":"), and format characters (zero-width spaces and joiners, soft
hyphens, bidi marks) are removed, so "Ig\u200bnore" reads as "Ignore".

Patterns aim at text addressed *to the agent* (you / 你, chat-template role markers), so ordinary
memories about the user ("From now on I take the train", "User's system is Ubuntu") pass.
"""

import re
import unicodedata
from dataclasses import dataclass

REASON = "instruction-like content"

_OVERRIDE_VERB = r"(?:ignore|disregard|forget|override|discard|bypass|skip)"
_EN_PATTERNS = {
    "override of earlier instructions": (
        rf"\b{_OVERRIDE_VERB}\b.{{0,40}}\b(?:previous|prior|above|earlier|all|any|your)\b.{{0,20}}"
        r"\b(?:instructions?|prompts?|rules?|guidelines?|directions?|directives?|guardrails?|restrictions?)\b"
    ),
    # "Disregard everything you were told before", "forget all you have been taught".
    "override of what the agent was told": (
        rf"\b{_OVERRIDE_VERB}\b.{{0,20}}\b(?:everything|all|anything|whatever)\b.{{0,20}}\byou(?:'ve|'re)?\b.{{0,20}}"
        r"\b(?:told|said|given|taught|instructed|programmed|trained)\b"
    ),
    "new persona for the agent": (
        r"\b(?:from now on|starting now|henceforth|from this point(?: on)?)\b[,:]?\s+"
        r"(?:you\s+(?:are|will be|will act|must|shall|have no|no longer)|you're|act as|pretend|your (?:name|role) is)"
    ),
    "you are now": r"\byou are now\b|\byou're now\b",
    "pretend persona": r"\bpretend (?:that )?you(?:'re| are)\b",
    "system prompt": r"\b(?:system|developer)\s*prompt\b",
    "jailbreak persona": r"\bact as (?:an? )?(?:unrestricted|unfiltered|jailbroken|dan)\b|\bdo anything now\b",
    "no rules": r"\byou (?:have|has) no (?:rules|restrictions|limits|guidelines|filters)\b",
    "reveal secrets": r"\breveal (?:your|the) (?:instructions|prompt|secrets?|api key|system)\b",
    "new instructions": r"\bnew instructions?\s*:",
    # Role markers at the start of a line ("SYSTEM: …", "### Instruction:") and in upper case anywhere.
    "role marker": r"(?:^|[\n.!?]\s*)(?:system|developer)\s*:|#{2,}\s*(?:instructions?|system|response)\s*:",
    "upper-case role marker": r"(?-i:\b(?:SYSTEM|ASSISTANT|DEVELOPER)\s*:)",
    # Chat-template tokens of the common model families.
    "chat-template token": (
        r"<\|\s*[a-z_]+(?:\s*\|\s*[a-z_]+)*\s*\|>"  # <|im_start|>, <|system|>, <|eot_id|>
        r"|\[/?\s*inst\s*\]"  # [INST] … [/INST]
        r"|<</?\s*sys\s*>>"  # <<SYS>>
        r"|</?\s*(?:system|assistant|developer)\s*>"  # <system>, </system>
        r"|<(?:start|end)_of_turn>"  # Gemma
    ),
}
_ZH_PATTERNS = {
    "override of earlier instructions (zh)": (
        r"(?:忽略|无视|忽视|忘记|忘掉|不要理会|别管|抛开)[^。！？\n]{0,8}"
        r"(?:之前|以前|先前|此前|上面|以上|前面|刚才|所有|全部|一切)[^。！？\n]{0,10}"
        r"(?:指令|指示|规则|提示|设定|要求|限制|命令|被告知|告诉你)"
    ),
    "override of what the agent was told (zh)": (
        r"(?:忽略|无视|忽视|忘记|忘掉|不要理会)[^。！？\n]{0,6}(?:你|您)[^。！？\n]{0,8}(?:被告知|听到|收到|学到)的?"
        r"(?:一切|所有|全部|内容|东西)"
    ),
    "new persona for the agent (zh)": (
        r"(?:从现在(?:开始|起)|从今以后|今后|接下来)[,，:：]?\s*(?:你|您)(?:是|将是|就是|要扮演|扮演|必须|不再|没有)"
    ),
    "you are now (zh)": r"你现在(?:是|扮演|成为)",
    "no rules (zh)": r"(?:你|您)(?:不再|没有|不受)[^。！？\n]{0,4}(?:任何)?(?:限制|规则|约束|审查)",
    "system prompt (zh)": r"系统(?:提示|指令|消息|设定)",
    "role marker (zh)": r"(?:^|[\n。！？]\s*)(?:系统|助手|开发者)\s*:",
    "new instructions (zh)": r"新的?(?:指令|指示)\s*:",
}
_COMPILED = [
    (label, re.compile(pattern, re.IGNORECASE | re.DOTALL | re.MULTILINE))
    for label, pattern in {**_EN_PATTERNS, **_ZH_PATTERNS}.items()
]


@dataclass(frozen=True)
class ModerationResult:
    flagged: bool
    reason: str = ""
    rule: str = ""


def moderation_fold(text: str) -> str:
    """The text as detection reads it: NFKC, format characters (zero-width and the like) removed,
    typographic apostrophes made plain."""
    folded = unicodedata.normalize("NFKC", text)
    folded = "".join(ch for ch in folded if unicodedata.category(ch) != "Cf")
    return folded.replace("\u2019", "'").replace("\u2018", "'")


def moderation_check(text: str) -> ModerationResult:
    """Whether `text` must wait for a moderator before it can reach an agent's prompt."""
    if not text:
        return ModerationResult(False)
    folded = moderation_fold(text)
    for label, pattern in _COMPILED:
        if pattern.search(folded):
            return ModerationResult(True, REASON, label)
    return ModerationResult(False)


def looks_like_instruction(text: str) -> bool:
    return moderation_check(text).flagged
