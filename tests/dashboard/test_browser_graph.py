"""The memory graph in Chromium: readable at every size (no two labels overlap, a fit never zooms two
nodes up to giant size, hundreds of nodes still get labels), unlinked memories hidden and counted,
the entity filter and search, one memory's neighbourhood reached from its page, and memory text
shown as text."""

import random

import pytest

from memories.models import Entity, MemoryEntity, MemoryRelation
from tests.dashboard.browser import (
    NARROW,
    VIEWPORT,
    Watch,
    boxes,
    log_in,
    overlapping,
    person,
    screenshot,
    wait_ready,
)
from tests.dashboard.conftest import PASSWORD
from tests.dashboard.scenes import XSS
from tests.dashboard.test_browser_layout import _layout_problems
from tests.factories import MemoryFactory

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

MAX_FIT_ZOOM = 1.5

LABEL_BOXES = """() => {
    const cy = document.getElementById("graph").graph;
    const box = (n) => {
        const b = n.renderedBoundingBox({ includeNodes: false, includeEdges: false, includeLabels: true,
                                          includeOverlays: false });
        return { name: n.id(), x: b.x1, y: b.y1, width: b.w, height: b.h };
    };
    return {
        labels: cy.nodes(".labelled").map(box),
    };
}"""


def _city_graph(owner, *, memories: int, entities: int, unlinked: int = 0, seed: int = 3):
    """`memories` memories each mentioning one or two of `entities` places, a relation for every
    fifth memory, and `unlinked` memories with no link at all."""
    rng = random.Random(seed)
    places = [
        Entity.objects.create(owner=owner, name=f"Place {i}", normalized_name=f"place {i}", kind="place")
        for i in range(entities)
    ]
    rows = [
        MemoryFactory(owner=owner, content=f"Visited place {i} with a friend", strength=rng.uniform(0.2, 1.0))
        for i in range(memories)
    ]
    links = []
    for memory in rows:
        for place in rng.sample(places, min(len(places), rng.choice((1, 2)))):
            links.append(MemoryEntity(owner=owner, memory=memory, entity=place))
    MemoryEntity.objects.bulk_create(links)
    MemoryRelation.objects.bulk_create(
        [MemoryRelation(owner=owner, source=a, target=b, type="related") for a, b in zip(rows[::5], rows[1::5])]
    )
    alone = [MemoryFactory(owner=owner, content=f"Unlinked note {i}") for i in range(unlinked)]
    return rows, places, alone


def _drawn(page) -> int:
    page.wait_for_selector("#graph[data-drawn='1']")
    _labels_placed(page)
    return int(page.get_attribute("#graph", "data-nodes"))


def _labels_placed(page) -> None:
    """Wait until the labels were placed for the viewport the graph shows now."""
    page.wait_for_function(
        """() => {
            const node = document.getElementById("graph");
            const cy = node.graph;
            if (!cy) return false;
            const pan = cy.pan();
            const key = `${cy.zoom().toFixed(4)} ${pan.x.toFixed(1)} ${pan.y.toFixed(1)} ${cy.width()}x${cy.height()}`;
            return node.dataset.labelledFor === key;
        }"""
    )


def _labels(page) -> tuple[set[str], list]:
    """The nodes with a label drawn, and the pairs of labels that overlap."""
    labels = page.evaluate(LABEL_BOXES)["labels"]
    return {label["name"] for label in labels}, overlapping(labels)


def _on_screen(page) -> int:
    return page.evaluate(
        """() => {
            const cy = document.getElementById("graph").graph;
            return cy.nodes().filter((n) => {
                const p = n.renderedPosition();
                return p.x >= 0 && p.y >= 0 && p.x <= cy.width() && p.y <= cy.height();
            }).length;
        }"""
    )


def _zoom(page) -> float:
    return page.evaluate("() => document.getElementById('graph').graph.zoom()")


def test_a_big_graph_gets_labels_that_never_overlap_and_more_of_them_when_zoomed_in(server, browser):
    base = server.base
    alice = person("alice")
    _city_graph(alice, memories=700, entities=23, unlinked=30)
    watch = Watch(base)
    context = browser.new_context(viewport=VIEWPORT)
    page = watch.attach(context.new_page())
    log_in(page, base, "alice", PASSWORD)

    page.goto(f"{base}/graph/")
    wait_ready(page)
    page.fill("input[name=limit]", "1000")
    page.click("#graph-filters button[type=submit]")
    page.wait_for_function("document.getElementById('graph').dataset.nodes === '723'")
    assert _drawn(page) == 723
    assert page.inner_text("#graph-status").endswith("30 unlinked hidden")
    labelled, overlaps = _labels(page)
    assert overlaps == []
    assert len(labelled) >= 40
    screenshot(page, "graph-700")

    page.evaluate(
        "() => { const cy = document.getElementById('graph').graph;"
        " cy.zoom({ level: cy.zoom() * 4, renderedPosition: { x: cy.width() / 2, y: cy.height() / 2 } }); }"
    )
    _labels_placed(page)
    # labels keep their size on screen: zoomed in, most of the nodes in view have room for one
    zoomed, overlaps = _labels(page)
    assert overlaps == []
    assert len(zoomed) / _on_screen(page) > 4 * len(labelled) / 723

    page.check("#graph-unlinked")
    page.wait_for_function("document.getElementById('graph').dataset.nodes === '753'")
    context.close()
    watch.check()


def test_two_nodes_are_drawn_at_a_sensible_size(server, browser):
    base = server.base
    alice = person("alice")
    a = MemoryFactory(owner=alice, content="Likes green tea", strength=1.0)
    b = MemoryFactory(owner=alice, content="Drinks it without sugar", strength=1.0)
    MemoryRelation.objects.create(owner=alice, source=b, target=a, type="refines")
    watch = Watch(base)
    context = browser.new_context(viewport=VIEWPORT)
    page = watch.attach(context.new_page())
    log_in(page, base, "alice", PASSWORD)

    page.goto(f"{base}/graph/")
    wait_ready(page)
    assert _drawn(page) == 2
    assert _zoom(page) == MAX_FIT_ZOOM
    assert _labels(page) == ({str(a.pk), str(b.pk)}, [])
    # a strength-1 memory is 30 model pixels wide: 45 on screen at the largest fit
    widths = page.evaluate("() => document.getElementById('graph').graph.nodes().map((n) => n.renderedWidth())")
    assert [round(w, 6) for w in widths] == [45, 45]
    context.close()
    watch.check()


def test_entity_filter_search_and_a_memorys_neighbourhood(server, browser):
    base = server.base
    alice = person("alice")
    rows, places, _ = _city_graph(alice, memories=40, entities=5, unlinked=3)
    evil = MemoryFactory(owner=alice, content=XSS, strength=1.0)
    MemoryRelation.objects.create(owner=alice, source=evil, target=rows[0], type="contradicts")
    watch = Watch(base)
    context = browser.new_context(viewport=VIEWPORT)
    page = watch.attach(context.new_page())
    log_in(page, base, "alice", PASSWORD)

    page.goto(f"{base}/graph/")
    wait_ready(page)
    assert _drawn(page) == 41 + 5
    assert page.inner_text("#graph-status").endswith("3 unlinked hidden")

    # the entity filter: the memories mentioning Place 2, and the places those memories mention
    place = places[2]
    mentioning = set(MemoryEntity.objects.filter(entity=place).values_list("memory_id", flat=True))
    also_named = set(MemoryEntity.objects.filter(memory_id__in=mentioning).values_list("entity_id", flat=True))
    page.select_option("#graph-entity", str(place.pk))
    page.wait_for_function(f"location.search.includes('entity={place.pk}')")
    assert _drawn(page) == len(mentioning) + len(also_named)
    ids = page.evaluate("() => document.getElementById('graph').graph.nodes('[kind = \"memory\"]').map((n) => n.id())")
    assert set(ids) == {str(pk) for pk in mentioning}

    # search: one memory by its words; the filter is cleared first
    page.select_option("#graph-entity", "")
    page.fill("#graph-q", "place 17 with")
    page.press("#graph-q", "Enter")
    page.wait_for_function("location.search.includes('q=place+17')")
    assert _drawn(page) == 1 + MemoryEntity.objects.filter(memory=rows[17]).count()
    matched = page.evaluate("() => document.getElementById('graph').graph.nodes('.match').map((n) => n.id())")
    assert matched == [str(rows[17].pk)]

    # the neighbourhood of the first memory, from its own page
    page.goto(f"{base}/memories/{rows[0].pk}/")
    wait_ready(page)
    page.click("#memory-neighbourhood")
    wait_ready(page)
    _drawn(page)
    assert page.inner_text("#graph-focus-label") == "Visited place 0 with a friend"
    sharing = set(MemoryEntity.objects.filter(entity__memory_links__memory=rows[0]).values_list("memory_id", flat=True))
    related = {evil.pk, rows[1].pk}
    ids = page.evaluate("() => document.getElementById('graph').graph.nodes('[kind = \"memory\"]').map((n) => n.id())")
    assert set(ids) == {str(pk) for pk in sharing | related}
    labelled, overlaps = _labels(page)
    assert overlaps == []
    assert str(rows[0].pk) in labelled

    # a click on the hostile memory shows its text as text, with its two links
    position = page.evaluate(
        f"() => document.getElementById('graph').graph.getElementById('{evil.pk}').renderedPosition()"
    )
    graph_box = page.locator("#graph").bounding_box()
    page.mouse.click(graph_box["x"] + position["x"], graph_box["y"] + position["y"])
    page.wait_for_selector("#graph-panel:not([hidden])")
    assert page.inner_text("#graph-panel .graph-panel-text") == XSS
    assert page.locator("img").count() == 0
    page.click("#graph-panel-focus")
    page.wait_for_function(f"location.search.includes('focus={evil.pk}')")
    _drawn(page)
    assert page.inner_text("#graph-focus-label") == XSS
    screenshot(page, "graph-neighbourhood")
    page.click("#graph-focus-clear")
    page.wait_for_function("!location.search.includes('focus=')")
    assert _drawn(page) == 41 + 5
    context.close()
    watch.check()


def test_at_390_px_the_graph_page_has_nothing_overlapping(server, browser):
    base = server.base
    person("root-operator", is_staff=True)  # the topbar's owner switch is for staff
    alice = person("alice")
    _city_graph(alice, memories=120, entities=12, unlinked=4)
    watch = Watch(base)
    context = browser.new_context(viewport=NARROW, device_scale_factor=1)
    page = watch.attach(context.new_page())
    log_in(page, base, "root-operator", PASSWORD)

    page.goto(f"{base}/graph/?owner=alice")
    wait_ready(page)
    assert _drawn(page) == 132
    assert _layout_problems(page, "/graph/") == []
    controls = boxes(page, "#graph-filters > label, #graph-filters > button, #graph-filters .cats > label")
    assert overlapping(controls) == []
    labelled, overlaps = _labels(page)
    assert overlaps == []
    assert len(labelled) >= 5
    screenshot(page, "narrow-graph")
    context.close()
    watch.check()
