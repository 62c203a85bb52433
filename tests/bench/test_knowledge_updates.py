"""bench/knowledge_updates.py's scenarios, in CI: every knowledge update leaves the context with the
new value, no stale pin, and search ranking the new value first (issue 11)."""

import json

import pytest

from tests.bench.support import bench_script


def _call(api):
    def call(method, path, body=None):
        if method == "GET":
            response = api.get(path)
        else:
            response = api.generic(method, path, data=json.dumps(body or {}), content_type="application/json")
        return response.status_code, (response.json() if response.content else None)

    return call


def test_the_suite_has_thirty_scenarios_in_both_languages_and_every_kind():
    # given the scenario set
    scenarios = bench_script("knowledge_updates").SCENARIOS

    # then it is at least 30 scenarios, English and Chinese, covering every kind the issue names
    assert len(scenarios) >= 30
    assert {s["lang"] for s in scenarios} == {"en", "zh"}
    assert {s["kind"] for s in scenarios} == {"preference", "move", "job", "value", "restated", "contradiction"}
    assert len({s["name"] for s in scenarios}) == len(scenarios)


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_every_knowledge_update_scenario_passes_through_the_rest_api(api, user, local_embedder):
    # given the scenarios, each in its own agent namespace of one owner
    bench = bench_script("knowledge_updates")

    # when each is played through the REST API (sessions ended and consolidated in process)
    results = bench.run_all(_call(api), bench.SCENARIOS, prefix="ci")

    # then none but the known misses has a problem: the new value is pinned, no stale pin, search ranks
    # the new value first
    failures = {scenario["name"]: problems for scenario, problems in results if problems}
    assert set(failures) == bench.KNOWN_MISSES


def test_scenarios_of_ones_own_load_from_a_json_file(tmp_path):
    # given a file with one scenario, its stale markers left out
    bench = bench_script("knowledge_updates")
    path = tmp_path / "mine.json"
    mine = {
        "name": "bank",
        "lang": "en",
        "kind": "value",
        "before": ["My bank is Barclays."],
        "after": ["I moved my accounts to Monzo."],
        "query": "Which bank does the user use?",
        "new": ["monzo"],
    }
    path.write_text(json.dumps([mine]), encoding="utf-8")

    # when it is loaded
    loaded = bench.scenarios_load(path)

    # then it is the scenario, with no stale markers
    assert loaded == [{**mine, "stale": []}]


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("{}", "expected a non-empty JSON list of scenarios"),
        ("[1]", "entry 0 is not an object"),
        ('[{"name": "x"}]', "entry 0: 'lang' must be a str"),
        (
            '[{"name": "x", "lang": "fr", "kind": "value", "before": [], "after": [], "query": "q", "new": []}]',
            "entry 0: lang must be en or zh and kind one of "
            "['contradiction', 'job', 'move', 'preference', 'restated', 'value']",
        ),
    ],
)
def test_a_scenario_file_that_is_not_a_list_of_scenarios_is_refused_with_its_reason(tmp_path, content, reason):
    # given a file that is not a list of well-formed scenarios
    bench = bench_script("knowledge_updates")
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="utf-8")

    # when it is loaded, then the first problem is named
    with pytest.raises(ValueError) as refused:
        bench.scenarios_load(path)
    assert str(refused.value) == reason
