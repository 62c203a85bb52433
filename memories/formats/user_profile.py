"""USER.md read back line by line (seed 001's profile, or ours from `render_user_md`) for imports.

`memory_md.parse_user_md` only knows our own layout; a profile a person wrote has bullets before any
heading, `key: value` lines, numbered lists and Chinese headings. Every such line becomes one
profile item with its line number and the heading it sits under.
"""

import re
from dataclasses import dataclass

from memories.formats.categories import category_from_seed
from memories.formats.memory_md import USER_MD_SECTIONS
from memories.models import Category

_BULLET = re.compile(r"^(?:[-*+•]|\d+[.)])\s+(?P<text>.+)$")
_HEADING = re.compile(r"^#{1,6}\s+(?P<title>.*?)\s*#*$")
_KEY_VALUE = re.compile(r"^[^:：]{1,40}[:：]\s*\S")
_SKIPPED = re.compile(r"^(?:… and \d+ more|\.\.\. and \d+ more|Nothing is known about the user yet\.?)$")

_SECTION_CATEGORY = {title.lower(): category for category, title in USER_MD_SECTIONS.items()}
_KEYWORDS = (
    (re.compile(r"prefer|like|taste|favou?rite|偏好|喜好|喜欢|口味", re.I), Category.PREFERENCE),
    (re.compile(r"habit|routine|workflow|习惯|作息|工作流", re.I), Category.WORKFLOW),
    (re.compile(r"rule|constraint|规则|约束|禁止", re.I), Category.RULE),
    (re.compile(r"project|项目", re.I), Category.PROJECT),
    (re.compile(r"todo|open item|待办|跟进", re.I), Category.TODO),
)


@dataclass
class ProfileItem:
    line: int
    section: str
    text: str


def parse_user_profile(text: str) -> list[ProfileItem]:
    items: list[ProfileItem] = []
    section = ""
    titled = False
    for number, raw in enumerate(text.lstrip("\ufeff").splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("<!--") or "\x00" in line:
            continue
        heading = _HEADING.match(line)
        if heading:
            # The document's first top-level heading ("# User Profile: alice") is its title, not a section.
            is_title = raw.startswith("# ") and not titled and not items
            titled = titled or is_title
            section = "" if is_title else heading["title"]
            continue
        bullet = _BULLET.match(line)
        content = bullet["text"].strip() if bullet else line
        if _SKIPPED.match(content):
            continue
        if bullet or section or _KEY_VALUE.match(line):
            items.append(ProfileItem(number, section, content))
    return items


def category_for_section(section: str) -> str:
    """preference or fact for a profile line, or our own category when the heading is one of ours."""
    title = section.strip().lower()
    if title in _SECTION_CATEGORY:
        return _SECTION_CATEGORY[title]
    mapped = category_from_seed(title)
    if mapped:
        return mapped
    for pattern, category in _KEYWORDS:
        if pattern.search(title):
            return category
    return Category.FACT
