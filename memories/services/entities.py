"""Entity linking: every memory, whatever wrote it, is linked to the people, places, organisations,
projects and tools its text names (issue 14: the graph must link "Lives near the Alfama district in
Lisbon" to Lisbon whether it came from extraction, REST, MCP, an import or a MEMORY.md edit).

`memory_create` and `memory_update` call `memory_entities_link`, so no write path can skip it. An
extractor that knows more (an LLM naming "Melanie" as a person) passes its entities as hints; the
text's own names are always found by the same offline rules, in English and Chinese.
"""

import re

from django.db import IntegrityError, transaction

from memories.extraction import vocabulary
from memories.extraction.candidates import tool_entities
from memories.models import Entity, EntityKind, Memory, MemoryEntity

MAX_NAME = 200

# Runs of capitalised words ("New York", "Visual Studio Code"); a leading lower-case particle such
# as "de" or "van" inside a name is rare enough in memories to leave out.
_CAPITALISED = re.compile(r"(?<![\w.'’])([A-Z][\w.+#&-]*[\w+#](?:\s+[A-Z][\w.+#&-]*[\w+#])*)")
_SENTENCE_START = re.compile(r"(?:^|[.!?;:]\s+|\n\s*(?:[-*]\s+)?)$")
# Capitalised words that are not names wherever they stand.
_NOT_NAMES = frozenset(
    "i i'm i've i'll i'd user users assistant the a an my our it its this that these those we you they he she "
    "his her their there here when where what who why how if and or but so then also not no yes ok okay "
    "monday tuesday wednesday thursday friday saturday sunday january february march april may june july "
    "august september october november december today tomorrow yesterday".split()
)
# After a sentence-initial capitalised word, these make it the subject of a sentence, i.e. a name
# ("Melanie lives …"); without them it is usually a verb or adverb ("Lives near …", "Prefers …").
_SUBJECT_VERBS = frozenset(
    "is was has had have lives lived works worked likes liked loves loved prefers preferred uses used "
    "wants wanted needs needed said says went goes moved plays played owns owned studies studied "
    "enjoys enjoyed hates hated runs ran visited visits met meets and will would can could does did "
    "thinks thought feels felt got gets bought started joined left teaches taught writes wrote "
    "'s ’s".split()
)
_PLACE_BEFORE = re.compile(r"\b(?:in|near|from|to|around|visit|visited|visiting|outside|into)\s+(?:the\s+)?$", re.I)
_ORG_BEFORE = re.compile(
    r"\b(?:works?|worked|working|job|employed|intern(?:ed|ing)?|joined|joins)\s+(?:at|for|with)\s+(?:the\s+)?$"
    r"|\b(?:joined|joins)\s+(?:the\s+)?$",
    re.I,
)
_PROJECT_AFTER = re.compile(r"\s+(?:project|app|repo|repository|startup)\b", re.I)
_ZH_QUOTED = re.compile(r"[「『《“](?P<name>[^」』》”]{1,30})[」』》”]")
# At most four characters before the suffix keeps a verb in front out of the name.
_ZH_ORG = re.compile(r"[\u4e00-\u9fff]{2,4}(?:" + "|".join(vocabulary.ZH_ORG_SUFFIXES) + r")")
_ZH_LEADING = re.compile(r"^(?:我在|我们在|在|去|到|是|的|和|跟|给|从|于|我|我们|住|搬)+")


def entities_detect(*, text: str) -> list[tuple[str, str]]:
    """(name, kind) of the entities `text` names, in order of appearance, without repeats."""
    found: list[tuple[str, str]] = list(tool_entities(text))
    tools = {name.casefold() for name, _ in found}
    for match in _CAPITALISED.finditer(text):
        words = match.group(1).split()
        while words and words[0].casefold() in _NOT_NAMES:
            words.pop(0)
        if not words:
            continue
        name = " ".join(words)
        start = match.start() + match.group(1).index(words[0])
        before = text[:start]
        if len(words) == 1 and _SENTENCE_START.search(before):
            following = re.match(r"[\w'’]+", text[start + len(name) :].lstrip())
            if following is None or following.group(0).casefold() not in _SUBJECT_VERBS:
                continue
        if name.casefold() in tools:
            continue
        after = text[start + len(name) :]
        if _ORG_BEFORE.search(before):
            kind = EntityKind.ORGANIZATION
        elif _PROJECT_AFTER.match(after):
            kind = EntityKind.PROJECT
        elif _PLACE_BEFORE.search(before) and not name.isupper():  # "went to the LGBTQ group"
            kind = EntityKind.PLACE
        else:
            kind = EntityKind.OTHER
        found.append((name, kind))
    found += [(m["name"], EntityKind.OTHER) for m in _ZH_QUOTED.finditer(text)]
    found += [(_ZH_LEADING.sub("", m.group(0)), EntityKind.ORGANIZATION) for m in _ZH_ORG.finditer(text)]
    found += [(place, EntityKind.PLACE) for place in vocabulary.ZH_PLACES if place in text]
    return _unique(found)


def _unique(entities) -> list[tuple[str, str]]:
    seen: set[str] = set()
    out = []
    for name, kind in entities:
        name = (name or "").strip(" .,;:!?\"'()（）。，、")[:MAX_NAME]
        key = name.casefold()
        if len(name) < 2 or key in seen or key in {"user", "用户"}:
            continue
        seen.add(key)
        out.append((name, kind if kind in EntityKind.values else EntityKind.OTHER))
    return out


def _resolve(owner_id, wanted: list[tuple[str, str]]) -> list[Entity]:
    """The owner's entity for each (name, kind), created when missing. A name found without a kind
    ("other") joins the entity of that name the owner already has, whatever its kind, and a name
    first seen without a kind takes the kind it is given later, so "Lisbon" from an edit and
    "Lisbon" (place) from extraction are one node."""
    keys = {name.casefold() for name, _ in wanted}
    existing: dict[tuple[str, str], Entity] = {}
    by_name: dict[str, Entity] = {}
    for entity in Entity.objects.filter(owner_id=owner_id, normalized_name__in=keys).order_by("created_at", "pk"):
        existing[(entity.normalized_name, entity.kind)] = entity
        current = by_name.get(entity.normalized_name)
        if current is None or (current.kind == EntityKind.OTHER and entity.kind != EntityKind.OTHER):
            by_name[entity.normalized_name] = entity
    missing = []
    for name, kind in wanted:
        key = name.casefold()
        if (key, kind) in existing or (kind == EntityKind.OTHER and key in by_name):
            continue
        vague = existing.get((key, EntityKind.OTHER))
        if vague is not None and _sharpen(vague, kind):
            existing[(key, kind)] = by_name[key] = existing.pop((key, EntityKind.OTHER))
            continue
        missing.append(Entity(owner_id=owner_id, name=name, normalized_name=key, kind=kind))
    if missing:
        # Another writer may create the same entity at the same moment: the unique constraint keeps
        # one, and the fetch below reads whichever won. Inserted in one order (by name), two writers
        # of overlapping sets never wait on each other in a cycle.
        missing.sort(key=lambda e: (e.normalized_name, e.kind))
        Entity.objects.bulk_create(missing, ignore_conflicts=True)
        for entity in Entity.objects.filter(
            owner_id=owner_id, normalized_name__in={e.normalized_name for e in missing}
        ):
            existing.setdefault((entity.normalized_name, entity.kind), entity)
            by_name.setdefault(entity.normalized_name, entity)
    out = []
    for name, kind in wanted:
        key = name.casefold()
        entity = existing.get((key, kind)) or (by_name.get(key) if kind == EntityKind.OTHER else None)
        if entity is not None and entity not in out:
            out.append(entity)
    return out


def _sharpen(entity: Entity, kind: str) -> bool:
    """Give an entity known only by name ("other") the kind it was just named with."""
    try:
        with transaction.atomic():
            updated = Entity.objects.filter(pk=entity.pk, kind=EntityKind.OTHER).update(kind=kind)
    except IntegrityError:  # another writer created (name, kind) meanwhile: link to that one
        return False
    if updated:
        entity.kind = kind
    return bool(updated)


def memory_entities_link(*, memory: Memory, hints: list[tuple[str, str]] | None = None, relink: bool = False) -> list:
    """Link `memory` to the entities its subject and content name, plus `hints` from an extractor.

    With `relink` (its text changed) links to names the new text no longer mentions are dropped;
    hinted links whose name is still in the text stay."""
    # The content first: its spelling ("Neovim") names the entity, not the slot key ("use neovim").
    text = f"{memory.content}\n{memory.subject}" if memory.subject else memory.content
    wanted = _unique([*(hints or []), *entities_detect(text=text)])
    entities = _resolve(memory.owner_id, wanted) if wanted else []
    if relink:
        folded = text.casefold()
        stale = [
            link.pk
            for link in MemoryEntity.objects.filter(memory=memory).select_related("entity")
            if link.entity not in entities and link.entity.normalized_name not in folded
        ]
        if stale:
            MemoryEntity.objects.filter(pk__in=stale).delete()
    if entities:
        MemoryEntity.objects.bulk_create(
            [MemoryEntity(owner_id=memory.owner_id, memory=memory, entity=e) for e in entities],
            ignore_conflicts=True,
        )
    return entities
