"""Knowledge updates through the REST API: does the service keep the current value and let go of the old?

Each scenario (43; the last 10 were written after the first 33 passed) is two conversations of one
user, in English or Chinese: the first states something (a preference, where they live, where they
work, a code, a fact), the second changes it ("I quit coffee", "I moved to Lisbon", "我把编辑器换成了VS
Code", "the new code is 9902"), restates it, or contradicts it. Each runs in its own agent
namespace, through the public API only: POST /sessions/,
POST /sessions/{id}/turns/, POST /sessions/{id}/end/ (extraction at session end), or POST /memories/
for the value changes an agent writes itself. Extraction may finish after the session end is answered
(embedded `serve` runs it in a background process), so after each conversation it polls
GET /metrics/ until the owner's extraction queue is idle (failing after 120 s). After the second
conversation it checks:

- context: GET /api/v1/context/ pins a memory carrying the new value;
- no stale pin: no pinned memory of the context states the old value only (the `stale` markers);
- search: POST /api/v1/search/ for the scenario's question ranks a memory with the new value above
  every memory with the old one;
- for a restated fact: exactly one active memory states it (reinforced, not duplicated).

The markers are substrings of what a correct memory must (new) or must not (stale) say; they are
about the facts, not about the service's wording.

Usage:
    .venv/bin/python bench/knowledge_updates.py                 # starts `manage.py serve` on a free port
    .venv/bin/python bench/knowledge_updates.py --base-url http://127.0.0.1:8000 --api-key mem_…
The started server uses its own database (EMBEDDED_PG_DATABASE, default "bench_knowledge_updates"),
dropped and created afresh, so it never touches the service's data.
"""

import argparse
import http.client
import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from urllib.parse import urlencode, urlsplit

# The tests load this file by its path: its folder's modules are not on sys.path then.
sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import REPO, free_port, server_wait, service_python  # noqa: E402

DEFAULT_DATABASE = "bench_knowledge_updates"

FILLER_EN = ["Thanks, that's all for now.", "Talk later."]
FILLER_ZH = ["好的，谢谢。", "回头再聊。"]

# kind: preference | move | job | value | restated | contradiction
# before / after: the user's turns of conversation 1 and 2 ("memory:" = POST /memories/ instead).
SCENARIOS: list[dict] = [
    # --- preference changes -------------------------------------------------------------------
    {
        "name": "coffee to green tea (the measured failure)",
        "lang": "en",
        "kind": "preference",
        "before": ["I love coffee, I drink a big cup of espresso every single morning."],
        "after": [
            "I have quit coffee completely. These days I only drink green tea in the morning, I prefer it now.",
            "Please remember that I don't drink coffee anymore.",
        ],
        "query": "What does the user drink in the morning?",
        "new": ["green tea"],
        "stale": ["loves coffee", "espresso"],
    },
    {
        "name": "switched to green tea instead of coffee",
        "lang": "en",
        "kind": "preference",
        "before": ["I really love coffee."],
        "after": ["Actually I switched to green tea instead of coffee."],
        "query": "coffee or tea?",
        "new": ["green tea"],
        "stale": ["loves coffee"],
    },
    {
        "name": "vim to VS Code",
        "lang": "en",
        "kind": "preference",
        "before": ["I use vim for all my coding."],
        "after": ["I switched from vim to VS Code last month."],
        "query": "Which editor does the user use?",
        "new": ["vs code"],
        "stale": ["uses vim"],
    },
    {
        "name": "stopped eating meat",
        "lang": "en",
        "kind": "preference",
        "before": ["I love steak, I eat meat almost every day."],
        "after": ["I no longer eat meat, I went vegetarian."],
        "query": "Does the user eat meat?",
        "new": ["no longer eat"],
        "stale": ["loves steak", "eats meat almost every day"],
    },
    {
        "name": "quit smoking",
        "lang": "en",
        "kind": "preference",
        "before": ["I smoke a pack of cigarettes a day."],
        "after": ["I quit smoking two months ago."],
        "query": "Does the user smoke?",
        "new": ["quit smoking"],
        "stale": ["smokes a pack"],
    },
    {
        "name": "now prefers dark mode",
        "lang": "en",
        "kind": "preference",
        "before": ["I prefer light mode in every app."],
        "after": ["I now prefer dark mode in every app."],
        "query": "light or dark mode?",
        "new": ["dark mode"],
        "stale": ["light mode"],
    },
    {
        "name": "不再喝咖啡",
        "lang": "zh",
        "kind": "preference",
        "before": ["我很喜欢喝咖啡，每天早上都喝一杯拿铁。"],
        "after": ["我已经不再喝咖啡了。", "我现在只喝绿茶。"],
        "query": "用户早上喝什么？",
        "new": ["绿茶"],
        "stale": ["喜欢喝咖啡", "拿铁"],
    },
    {
        "name": "戒烟",
        "lang": "zh",
        "kind": "preference",
        "before": ["我每天都抽烟。"],
        "after": ["我戒了烟，已经三个月了。"],
        "query": "用户抽烟吗？",
        "new": ["戒了烟"],
        "stale": ["每天都抽烟"],
    },
    {
        "name": "编辑器换成 VS Code",
        "lang": "zh",
        "kind": "preference",
        "before": ["我用vim写代码。"],
        "after": ["我把编辑器换成了VS Code。"],
        "query": "用户用什么编辑器？",
        "new": ["vs code"],
        "stale": ["用vim写代码"],
    },
    {
        "name": "更喜欢茶",
        "lang": "zh",
        "kind": "preference",
        "before": ["我更喜欢喝咖啡。"],
        "after": ["我现在更喜欢喝茶。"],
        "query": "用户喜欢喝什么？",
        "new": ["喝茶"],
        "stale": ["更喜欢喝咖啡"],
    },
    # --- moves ------------------------------------------------------------------------------------
    {
        "name": "Berlin to Lisbon",
        "lang": "en",
        "kind": "move",
        "before": ["I live in Berlin with my partner."],
        "after": ["We moved from Berlin to Lisbon last month."],
        "query": "Where does the user live?",
        "new": ["lisbon"],
        "stale": ["lives in berlin"],
    },
    {
        "name": "moved to Toronto",
        "lang": "en",
        "kind": "move",
        "before": ["I live in Chicago."],
        "after": ["I moved to Toronto in March for a new job."],
        "query": "Which city does the user live in?",
        "new": ["toronto"],
        "stale": ["lives in chicago"],
    },
    {
        "name": "relocated to Osaka",
        "lang": "en",
        "kind": "move",
        "before": ["I'm based in Tokyo."],
        "after": ["I relocated to Osaka this spring."],
        "query": "Where is the user based?",
        "new": ["osaka"],
        "stale": ["based in tokyo"],
    },
    {
        "name": "北京搬到上海",
        "lang": "zh",
        "kind": "move",
        "before": ["我住在北京。"],
        "after": ["我上个月搬到上海了。"],
        "query": "用户住在哪里？",
        "new": ["上海"],
        "stale": ["住在北京"],
    },
    {
        "name": "从杭州搬到深圳",
        "lang": "zh",
        "kind": "move",
        "before": ["我住在杭州。"],
        "after": ["我从杭州搬到了深圳。"],
        "query": "用户现在住在哪个城市？",
        "new": ["深圳"],
        "stale": ["住在杭州"],
    },
    # --- job changes --------------------------------------------------------------------------
    {
        "name": "Google to Stripe",
        "lang": "en",
        "kind": "job",
        "before": ["I work at Google as a software engineer."],
        "after": ["I joined Stripe as a designer last week."],
        "query": "Where does the user work?",
        "new": ["stripe"],
        "stale": ["works at google"],
    },
    {
        "name": "now works at Microsoft",
        "lang": "en",
        "kind": "job",
        "before": ["I work at Amazon."],
        "after": ["I now work at Microsoft."],
        "query": "Which company does the user work for?",
        "new": ["microsoft"],
        "stale": ["works at amazon"],
    },
    {
        "name": "started at a hospital",
        "lang": "en",
        "kind": "job",
        "before": ["I work at a bakery downtown."],
        "after": ["I started working at St. Mary's Hospital in June."],
        "query": "Where does the user work now?",
        "new": ["hospital"],
        "stale": ["works at a bakery"],
    },
    {
        "name": "跳槽到腾讯",
        "lang": "zh",
        "kind": "job",
        "before": ["我在阿里巴巴工作。"],
        "after": ["我跳槽到了腾讯。"],
        "query": "用户在哪家公司工作？",
        "new": ["腾讯"],
        "stale": ["在阿里巴巴工作"],
    },
    {
        "name": "现在在字节工作",
        "lang": "zh",
        "kind": "job",
        "before": ["我在百度工作。"],
        "after": ["我现在在字节跳动工作。"],
        "query": "用户在哪里上班？",
        "new": ["字节跳动"],
        "stale": ["在百度工作"],
    },
    # --- value changes (an agent writes them with POST /memories/) -------------------------------
    {
        "name": "gym locker code",
        "lang": "en",
        "kind": "value",
        "before": ["memory:My locker code at the gym is 4471"],
        "after": ["memory:My locker code at the gym is 9902"],
        "query": "gym locker code",
        "new": ["9902"],
        "stale": ["4471"],
    },
    {
        "name": "wifi password",
        "lang": "en",
        "kind": "value",
        "before": ["memory:The home wifi password is sunflower42"],
        "after": ["memory:The home wifi password is maple-77"],
        "query": "home wifi password",
        "new": ["maple-77"],
        "stale": ["sunflower42"],
    },
    {
        "name": "server IP",
        "lang": "en",
        "kind": "value",
        "before": ["memory:Server db-01 has IP address 10.0.0.11"],
        "after": ["memory:Server db-01 has IP address 10.0.3.40"],
        "query": "IP address of db-01",
        "new": ["10.0.3.40"],
        "stale": ["10.0.0.11"],
    },
    {
        "name": "phone number",
        "lang": "en",
        "kind": "value",
        "before": ["My phone number is 555-0134."],
        "after": ["My phone number is 555-0199 now, I changed carriers."],
        "query": "What is the user's phone number?",
        "new": ["555-0199"],
        "stale": ["555-0134"],
    },
    {
        "name": "储物柜密码",
        "lang": "zh",
        "kind": "value",
        "before": ["memory:用户的健身房储物柜密码是4471"],
        "after": ["memory:用户的健身房储物柜密码是9902"],
        "query": "储物柜密码",
        "new": ["9902"],
        "stale": ["4471"],
    },
    {
        "name": "门禁密码",
        "lang": "zh",
        "kind": "value",
        "before": ["memory:公司门禁密码是1357"],
        "after": ["memory:公司门禁密码是2468"],
        "query": "门禁密码是多少",
        "new": ["2468"],
        "stale": ["1357"],
    },
    # --- restated facts: reinforced, never duplicated ----------------------------------------------
    {
        "name": "allergy said twice",
        "lang": "en",
        "kind": "restated",
        "before": ["I'm allergic to penicillin."],
        "after": ["Just so you know, I'm allergic to penicillin."],
        "query": "Is the user allergic to anything?",
        "new": ["penicillin"],
        "stale": [],
    },
    {
        "name": "dog's name said twice",
        "lang": "en",
        "kind": "restated",
        "before": ["memory:User has a border collie named Biscuit"],
        "after": ["memory:User has a border collie named Biscuit"],
        "query": "What is the user's dog called?",
        "new": ["biscuit"],
        "stale": [],
    },
    {
        "name": "对花生过敏",
        "lang": "zh",
        "kind": "restated",
        "before": ["我对花生过敏。"],
        "after": ["提醒一下，我对花生过敏。"],
        "query": "用户对什么过敏？",
        "new": ["花生"],
        "stale": [],
    },
    # --- contradictions -------------------------------------------------------------------------
    {
        "name": "likes jazz, then not anymore",
        "lang": "en",
        "kind": "contradiction",
        "before": ["I like jazz."],
        "after": ["I don't like jazz anymore."],
        "query": "Does the user like jazz?",
        "new": ["n't like jazz", "not like jazz", "no longer like", "dislikes jazz"],
        "stale": ["user likes jazz"],
    },
    {
        "name": "vegetarian no more",
        "lang": "en",
        "kind": "contradiction",
        "before": ["I'm vegetarian."],
        "after": ["I'm not vegetarian anymore."],
        "query": "Is the user vegetarian?",
        "new": ["not vegetarian", "no longer vegetarian"],
        "stale": ["user is vegetarian"],
    },
    {
        "name": "不再喜欢跑步",
        "lang": "zh",
        "kind": "contradiction",
        "before": ["我喜欢跑步。"],
        "after": ["我不再喜欢跑步了。"],
        "query": "用户喜欢跑步吗？",
        "new": ["不再喜欢跑步"],
        "stale": ["用户喜欢跑步"],
    },
    {
        "name": "不喝酒了",
        "lang": "zh",
        "kind": "contradiction",
        "before": ["我每周末都喝啤酒。"],
        "after": ["我不喝酒了。"],
        "query": "用户喝酒吗？",
        "new": ["不喝酒"],
        "stale": ["每周末都喝啤酒"],
    },
    # --- written after the set above passed, to check it generalises (8/10 at first: the two misses,
    # a habit said with "now" and 特别 read as a negation, were fixed in the service, not here) -------
    {
        "name": "running to cycling",
        "lang": "en",
        "kind": "preference",
        "before": ["I go running every evening after work."],
        "after": ["I stopped running because of my knee, I cycle every evening now."],
        "query": "What does the user do in the evening?",
        "new": ["cycl"],
        "stale": ["goes running every evening"],
    },
    {
        "name": "Android to iPhone",
        "lang": "en",
        "kind": "preference",
        "before": ["I use an Android phone."],
        "after": ["I switched from Android to an iPhone."],
        "query": "What phone does the user have?",
        "new": ["iphone"],
        "stale": ["uses an android"],
    },
    {
        "name": "Seattle to Denver",
        "lang": "en",
        "kind": "move",
        "before": ["I live in Seattle."],
        "after": ["I moved to Denver last year."],
        "query": "Where does the user live?",
        "new": ["denver"],
        "stale": ["lives in seattle"],
    },
    {
        "name": "Initech to Acme",
        "lang": "en",
        "kind": "job",
        "before": ["I work at Initech as an accountant."],
        "after": ["I joined Acme Corp in May."],
        "query": "Who is the user's employer?",
        "new": ["acme"],
        "stale": ["works at initech"],
    },
    {
        "name": "office parking spot",
        "lang": "en",
        "kind": "value",
        "before": ["memory:My parking spot at the office is B-14"],
        "after": ["memory:My parking spot at the office is C-02"],
        "query": "office parking spot",
        "new": ["c-02"],
        "stale": ["b-14"],
    },
    {
        "name": "不吃辣了",
        "lang": "zh",
        "kind": "contradiction",
        "before": ["我特别喜欢吃辣。"],
        "after": ["我现在不吃辣了。"],
        "query": "用户吃辣吗？",
        "new": ["不吃辣"],
        "stale": ["喜欢吃辣"],
    },
    {
        "name": "深圳搬到成都",
        "lang": "zh",
        "kind": "move",
        "before": ["我住在深圳。"],
        "after": ["我去年从深圳搬到了成都。"],
        "query": "用户住在哪个城市？",
        "new": ["成都"],
        "stale": ["住在深圳"],
    },
    {
        "name": "电脑换成Mac",
        "lang": "zh",
        "kind": "preference",
        "before": ["我用Windows电脑。"],
        "after": ["我把电脑换成了Mac。"],
        "query": "用户用什么电脑？",
        "new": ["mac"],
        "stale": ["windows"],
    },
    {
        "name": "WiFi密码",
        "lang": "zh",
        "kind": "value",
        "before": ["memory:家里的WiFi密码是abc123"],
        "after": ["memory:家里的WiFi密码是xyz789"],
        "query": "WiFi密码",
        "new": ["xyz789"],
        "stale": ["abc123"],
    },
    {
        "name": "cat's name said twice",
        "lang": "en",
        "kind": "restated",
        "before": ["I have a cat named Miso."],
        "after": ["By the way, I have a cat named Miso."],
        "query": "What is the user's cat called?",
        "new": ["miso"],
        "stale": [],
    },
]


class Api:
    """A tiny JSON client: `call(method, path, body)` → (status, parsed body)."""

    def __init__(self, base_url: str, api_key: str):
        parts = urlsplit(base_url)
        self.host, self.port = parts.hostname, parts.port or 80
        self.prefix = parts.path.rstrip("/")
        self.headers = {"Authorization": f"Token {api_key}", "Content-Type": "application/json"}

    def __call__(self, method: str, path: str, body=None):
        conn = http.client.HTTPConnection(self.host, self.port, timeout=120)
        try:
            conn.request(method, self.prefix + path, json.dumps(body) if body is not None else None, self.headers)
            response = conn.getresponse()
            raw = response.read()
        finally:
            conn.close()
        return response.status, (json.loads(raw) if raw else None)


def _has(text: str, markers: list[str]) -> bool:
    folded = text.casefold()
    return any(m.casefold() in folded for m in markers)


def _conversation(call, agent: str, lines: list[str], lang: str) -> None:
    direct = [line[len("memory:") :] for line in lines if line.startswith("memory:")]
    for content in direct:
        status, body = call("POST", "/api/v1/memories/", {"content": content, "agent": agent})
        if status not in (200, 201):
            raise RuntimeError(f"POST /memories/ answered {status}: {body}")
    said = [line for line in lines if not line.startswith("memory:")]
    if not said:
        return
    filler = FILLER_ZH if lang == "zh" else FILLER_EN
    turns = []
    for line in [*said, filler[0]]:
        turns += [
            {"role": "user", "content": line},
            {"role": "assistant", "content": "好的。" if lang == "zh" else "Noted."},
        ]
    turns.append({"role": "user", "content": filler[1]})
    status, session = call("POST", "/api/v1/sessions/", {"agent": agent})
    if status != 201:
        raise RuntimeError(f"POST /sessions/ answered {status}: {session}")
    status, body = call("POST", f"/api/v1/sessions/{session['id']}/turns/", {"turns": turns})
    if status not in (200, 201):
        raise RuntimeError(f"POST turns answered {status}: {body}")
    status, body = call("POST", f"/api/v1/sessions/{session['id']}/end/", {})
    if status not in (200, 202):
        raise RuntimeError(f"POST end answered {status}: {body}")


def wait_for_extraction(call, *, timeout: float = 120.0, interval: float = 0.5) -> None:
    """Block until the owner's extraction queue (GET /api/v1/metrics/) has no pending or running job
    and every stored turn has its vector.

    Embedded `serve` runs extraction in its background process, so a session end is answered
    before its memories exist; reading context or search before then scores the service on work
    it has not done yet. A queue that never drains is a failure of the service, not a pass."""
    deadline = time.monotonic() + timeout
    while True:
        status, metrics = call("GET", "/api/v1/metrics/")
        if status != 200:
            raise RuntimeError(f"GET /metrics/ answered {status}: {metrics}")
        queue = metrics["extraction_queue"]
        if not queue["pending"] and not queue["running"] and not metrics["turns_awaiting_vector"]:
            return
        if time.monotonic() >= deadline:
            raise TimeoutError(
                f"extraction not finished after {timeout:.0f}s: queue={queue}, "
                f"turns_awaiting_vector={metrics['turns_awaiting_vector']}"
            )
        time.sleep(interval)


def _active(call, agent: str) -> list[dict]:
    status, body = call("GET", "/api/v1/memories/?" + urlencode({"agent": agent, "status": "active", "page_size": 100}))
    if status != 200:
        raise RuntimeError(f"GET /memories/ answered {status}: {body}")
    return body["results"] if isinstance(body, dict) else body


def run_scenario(call, scenario: dict, agent: str) -> list[str]:
    """Play one scenario in namespace `agent`; the list of what went wrong (empty: it passed)."""
    # Wait after each conversation: the second must meet the first's memories, as it would in use.
    _conversation(call, agent, scenario["before"], scenario["lang"])
    wait_for_extraction(call)
    _conversation(call, agent, scenario["after"], scenario["lang"])
    wait_for_extraction(call)
    problems = []
    status, context = call("GET", "/api/v1/context/?" + urlencode({"agent": agent}))
    if status != 200:
        return [f"GET /context/ answered {status}"]
    pinned = [m["content"] for m in context["memories"] if m.get("kind") == "pinned"]
    if not any(_has(text, scenario["new"]) for text in pinned):
        problems.append(f"context has no pinned memory with {scenario['new']}: {pinned}")
    stale = [text for text in pinned if _has(text, scenario["stale"]) and not _has(text, scenario["new"])]
    if stale:
        problems.append(f"stale memories still pinned: {stale}")
    status, found = call("POST", "/api/v1/search/", {"query": scenario["query"], "agent": agent, "top_k": 10})
    if status != 200:
        return [*problems, f"POST /search/ answered {status}"]
    ranked = [r["content"] for r in found["results"]]
    first_new = next((i for i, t in enumerate(ranked) if _has(t, scenario["new"])), None)
    first_old = next(
        (i for i, t in enumerate(ranked) if _has(t, scenario["stale"]) and not _has(t, scenario["new"])), None
    )
    if first_new is None:
        problems.append(f"search finds no memory with {scenario['new']}: {ranked[:5]}")
    elif first_old is not None and first_old < first_new:
        problems.append(f"search ranks the stale value first: {ranked[:5]}")
    if scenario["kind"] == "restated":
        texts = [m["content"] for m in _active(call, agent) if _has(m["content"], scenario["new"])]
        if len(texts) != 1:
            problems.append(f"restated fact is {len(texts)} active memories: {texts}")
    return problems


def run_all(call, scenarios: list[dict] = SCENARIOS, prefix: str = "") -> list[tuple[dict, list[str]]]:
    prefix = prefix or f"ku-{uuid.uuid4().hex[:8]}"
    return [(s, run_scenario(call, s, f"{prefix}-{i:02d}")) for i, s in enumerate(scenarios)]


# --- a server of our own ------------------------------------------------------------------------


def _manage(*args: str, env: dict) -> str:
    command = [service_python(), "manage.py", *args]
    return subprocess.run(command, cwd=REPO, env=env, check=True, capture_output=True, text=True).stdout


def _fresh_database(env: dict, database: str) -> None:
    script = (
        "from django.db import connection\n"
        "with connection.cursor() as c:\n"
        f"    c.execute('DROP DATABASE IF EXISTS {database} WITH (FORCE)')\n"
        f"    c.execute('CREATE DATABASE {database}')\n"
    )
    _manage("shell", "-c", script, env={**env, "EMBEDDED_PG_DATABASE": "postgres"})


def start_server(database: str) -> tuple[subprocess.Popen, str, str]:
    env = {**os.environ, "EMBEDDED_PG_DATABASE": database, "THROTTLE_ENABLED": "0"}
    _fresh_database(env, database)
    _manage("migrate", "--verbosity", "0", env=env)
    key = _manage("createapikey", "knowledge-bench", "--name", "bench/knowledge_updates.py", env=env).split()[-1]
    port = free_port()
    log_path = REPO / "bench" / "results" / "knowledge_updates-server.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("w") as log:
        process = subprocess.Popen(
            [service_python(), "manage.py", "serve", "--no-demo", "--workers", "1", "--port", str(port)],
            cwd=REPO,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    server_wait(process, port, log_path, stop=subprocess.Popen.terminate, timeout=240)
    return process, f"http://127.0.0.1:{port}", key


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base-url", help="A running service (then --api-key is required).")
    parser.add_argument("--api-key")
    parser.add_argument("--database", default=DEFAULT_DATABASE, help="Database for the server this script starts.")
    parser.add_argument("--only", help="Run the scenarios whose name contains this text.")
    args = parser.parse_args()
    if args.base_url and not args.api_key:
        parser.error("--base-url needs --api-key")
    server = None
    if args.base_url:
        base_url, key = args.base_url, args.api_key
    else:
        server, base_url, key = start_server(args.database)
    scenarios = [s for s in SCENARIOS if not args.only or args.only.casefold() in s["name"].casefold()]
    try:
        started = time.monotonic()
        results = run_all(Api(base_url, key), scenarios)
        elapsed = time.monotonic() - started
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=60)
    by_lang: dict[str, list[int]] = {}
    by_kind: dict[str, list[int]] = {}
    for scenario, problems in results:
        ok = not problems
        print(f"{'PASS' if ok else 'FAIL'}  [{scenario['lang']}/{scenario['kind']}] {scenario['name']}")
        for problem in problems:
            print(f"        {problem}")
        for bucket, key_ in ((by_lang, scenario["lang"]), (by_kind, scenario["kind"])):
            bucket.setdefault(key_, [0, 0])
            bucket[key_][0] += ok
            bucket[key_][1] += 1
    passed = sum(1 for _, p in results if not p)
    print()
    for name, bucket in (("language", by_lang), ("kind", by_kind)):
        print(f"by {name}: " + ", ".join(f"{k} {v[0]}/{v[1]}" for k, v in sorted(bucket.items())))
    print(f"pass rate: {passed}/{len(results)} = {passed / len(results):.3f}  ({elapsed:.0f}s, {base_url})")
    return 0 if passed == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
