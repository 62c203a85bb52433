"""Knowledge updates through the REST API: does the service keep the current value and let go of the old?

Each scenario (154; the 10 after the first 33 were written once those passed, the last 111 are five
held-out probes, see their comments) is two conversations of one user, in English or Chinese: the
first states something (a preference, where they live, where they work, a code, a fact), the second
changes it ("I quit coffee", "I moved to Lisbon", "我把编辑器换成了VS Code", "the new code is 9902"),
restates it, or contradicts it. Each runs in its own agent
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
    # --- a held-out probe: phrasings written after the 43 above passed, measured before any change
    # (4/13 then; the misses are fixed by principle, see the commit)
    {
        "name": "gave up sugar",
        "lang": "en",
        "kind": "preference",
        "before": ["I put two spoons of sugar in my tea."],
        "after": ["I gave up sugar in January, I take my tea plain now."],
        "query": "How does the user take their tea?",
        "new": ["plain"],
        "stale": ["two spoons of sugar"],
    },
    {
        "name": "these days into climbing",
        "lang": "en",
        "kind": "preference",
        "before": ["My favourite sport is tennis."],
        "after": ["My favourite sport is bouldering these days, I haven't played tennis in a year."],
        "query": "What is the user's favourite sport?",
        "new": ["bouldering"],
        "stale": ["favourite sport is tennis"],
    },
    {
        "name": "no longer living in Madrid",
        "lang": "en",
        "kind": "move",
        "before": ["I live in Madrid."],
        "after": ["I don't live in Madrid anymore, I'm in Valencia now."],
        "query": "Where does the user live?",
        "new": ["valencia"],
        "stale": ["lives in madrid"],
    },
    {
        "name": "new address",
        "lang": "en",
        "kind": "move",
        "before": ["My home address is 12 Oak Street."],
        "after": ["My new home address is 48 Pine Avenue, we just moved."],
        "query": "What is the user's home address?",
        "new": ["48 pine"],
        "stale": ["12 oak"],
    },
    {
        "name": "left the bank",
        "lang": "en",
        "kind": "job",
        "before": ["I work at HSBC as an analyst."],
        "after": ["I left HSBC and I'm now a teacher at a primary school."],
        "query": "Where does the user work?",
        "new": ["teacher"],
        "stale": ["works at hsbc"],
    },
    {
        "name": "car changed",
        "lang": "en",
        "kind": "preference",
        "before": ["I drive a red Toyota Corolla."],
        "after": ["I sold the Corolla and bought a Tesla Model 3."],
        "query": "What car does the user drive?",
        "new": ["tesla"],
        "stale": ["drives a red toyota"],
    },
    {
        "name": "email changed",
        "lang": "en",
        "kind": "value",
        "before": ["My email address is ana.p@example.com."],
        "after": ["My email address is now ana.perez@newmail.org."],
        "query": "What is the user's email address?",
        "new": ["ana.perez@newmail.org"],
        "stale": ["ana.p@example.com"],
    },
    {
        "name": "改喝豆浆",
        "lang": "zh",
        "kind": "preference",
        "before": ["我早餐一般喝牛奶。"],
        "after": ["我现在早餐改喝豆浆了，不喝牛奶了。"],
        "query": "用户早餐喝什么？",
        "new": ["豆浆"],
        "stale": ["一般喝牛奶"],
    },
    {
        "name": "搬去广州",
        "lang": "zh",
        "kind": "move",
        "before": ["我家在南京。"],
        "after": ["我已经搬去广州住了。"],
        "query": "用户住在哪里？",
        "new": ["广州"],
        "stale": ["家在南京"],
    },
    {
        "name": "换了工作",
        "lang": "zh",
        "kind": "job",
        "before": ["我在华为上班。"],
        "after": ["我换工作了，现在在小米上班。"],
        "query": "用户在哪家公司上班？",
        "new": ["小米"],
        "stale": ["在华为上班"],
    },
    {
        "name": "手机号",
        "lang": "zh",
        "kind": "value",
        "before": ["我的手机号是13800001111。"],
        "after": ["我换了手机号，新号码是13900002222。"],
        "query": "用户的手机号是多少？",
        "new": ["13900002222"],
        "stale": ["13800001111"],
    },
    {
        "name": "以前现在",
        "lang": "zh",
        "kind": "preference",
        "before": ["我喜欢看恐怖片。"],
        "after": ["我以前喜欢看恐怖片，现在更喜欢看纪录片。"],
        "query": "用户喜欢看什么电影？",
        "new": ["纪录片"],
        "stale": ["我喜欢看恐怖片"],
    },
    {
        "name": "said again in other words",
        "lang": "en",
        "kind": "restated",
        "before": ["I'm lactose intolerant."],
        "after": ["Reminder: I am lactose intolerant."],
        "query": "Does the user have any dietary restrictions?",
        "new": ["lactose intolerant"],
        "stale": [],
    },
    # --- a second probe, written after the first was fixed and measured before its own fixes (1/8 on
    # the code before either, 4/8 after the first probe's fixes)
    {
        "name": "left Deloitte",
        "lang": "en",
        "kind": "job",
        "before": ["I'm an auditor at Deloitte."],
        "after": ["I quit my job at Deloitte in August and joined a startup called Fernway."],
        "query": "Where does the user work?",
        "new": ["fernway"],
        "stale": ["auditor at deloitte"],
    },
    {
        "name": "new licence plate",
        "lang": "en",
        "kind": "value",
        "before": ["My car's licence plate is KX-2201."],
        "after": ["My car's new licence plate is LM-9034, I re-registered it."],
        "query": "What is the user's licence plate?",
        "new": ["lm-9034"],
        "stale": ["kx-2201"],
    },
    {
        "name": "now prefers Python",
        "lang": "en",
        "kind": "preference",
        "before": ["I prefer Java for backend work."],
        "after": ["These days I prefer Python for backend work."],
        "query": "Which language does the user prefer for backend work?",
        "new": ["python"],
        "stale": ["prefers java"],
    },
    {
        "name": "changed my bank",
        "lang": "en",
        "kind": "value",
        "before": ["My bank is Barclays."],
        "after": ["I changed my bank, I'm with Monzo now."],
        "query": "Which bank is the user with?",
        "new": ["monzo"],
        "stale": ["bank is barclays"],
    },
    {
        "name": "离开了字节",
        "lang": "zh",
        "kind": "job",
        "before": ["我在字节跳动做产品经理。"],
        "after": ["我上个月离开了字节跳动，现在在美团工作。"],
        "query": "用户在哪里工作？",
        "new": ["美团"],
        "stale": ["在字节跳动做产品经理"],
    },
    {
        "name": "改吃素",
        "lang": "zh",
        "kind": "preference",
        "before": ["我每天都吃肉。"],
        "after": ["我最近改吃素了，不吃肉了。"],
        "query": "用户吃肉吗？",
        "new": ["吃素"],
        "stale": ["每天都吃肉"],
    },
    {
        "name": "换了邮箱",
        "lang": "zh",
        "kind": "value",
        "before": ["我的邮箱是wang@qq.com。"],
        "after": ["我换了邮箱，新邮箱是wang.li@163.com。"],
        "query": "用户的邮箱是什么？",
        "new": ["wang.li@163.com"],
        "stale": ["wang@qq.com"],
    },
    {
        "name": "现在更喜欢猫",
        "lang": "zh",
        "kind": "preference",
        "before": ["我喜欢狗。"],
        "after": ["我现在更喜欢猫。"],
        "query": "用户喜欢什么动物？",
        "new": ["猫"],
        "stale": ["喜欢狗"],
    },
    # --- a third probe: 30 scenarios written by a helper that never saw the rules or these scenarios'
    # phrasings (only this file's format). First measured at 5/30, the same before and after the
    # fixes of the first two probes; the fixes it led to are in its commit.
    {
        "name": "kindle back to paper books",
        "lang": "en",
        "kind": "preference",
        "before": ["I read everything on my Kindle these days, it's so much lighter to carry around."],
        "after": [
            "I'm done with the Kindle, honestly. I've gone back to paper books and I'm enjoying reading way more."
        ],
        "query": "Does the user prefer e-books or paper books?",
        "new": ["paper", "physical", "print"],
        "stale": ["reads everything on", "prefers the kindle", "prefers e-books", "prefers ebooks", "lighter to carry"],
    },
    {
        "name": "night owl turned morning person",
        "lang": "en",
        "kind": "preference",
        "before": ["I'm a total night owl — I do my best work after midnight."],
        "after": ["Funny thing, since last spring I've become a morning person. I'm up at 5:30 and at my desk by 6."],
        "query": "What time of day does the user work best?",
        "new": ["morning", "5:30"],
        "stale": ["is a night owl", "best after midnight", "best work after midnight"],
    },
    {
        "name": "side projects python to rust",
        "lang": "en",
        "kind": "preference",
        "before": ["I'm a Python person — all my side projects are in Python, usually with FastAPI."],
        "after": ["Python is history for my hobby stuff; since January every side project I start is in Rust."],
        "query": "Which programming language does the user use for side projects?",
        "new": ["rust"],
        "stale": ["python person", "fastapi", "side projects are in python", "projects are written in python"],
    },
    {
        "name": "left glasgow for bristol",
        "lang": "en",
        "kind": "move",
        "before": ["I live in Glasgow, in a flat near the West End."],
        "after": ["Big news — we finally left Glasgow last month. We're renting a little house in Bristol now."],
        "query": "Where does the user live?",
        "new": ["bristol"],
        "stale": ["lives in glasgow", "based in glasgow", "west end"],
    },
    {
        "name": "austin is history, now minneapolis",
        "lang": "en",
        "kind": "move",
        "before": ["I'm based in Austin, Texas, and I work remotely."],
        "after": [
            "Writing to you from my new apartment in Minneapolis! Austin is history — the heat finally got to me."
        ],
        "query": "Which city is the user based in?",
        "new": ["minneapolis"],
        "stale": ["based in austin", "lives in austin"],
    },
    {
        "name": "er nurse now teaching at fairview",
        "lang": "en",
        "kind": "job",
        "before": ["I'm a nurse at St. Mary's Hospital, mostly night shifts in the ER."],
        "after": [
            "I'm done with hospital work. "
            "Since March I've been teaching nursing students at Fairview Community College."
        ],
        "query": "Where does the user work now?",
        "new": ["fairview"],
        "stale": ["works at st. mary", "works at st mary", "night shift", "works in the er"],
    },
    {
        "name": "shopify to atlassian",
        "lang": "en",
        "kind": "job",
        "before": ["I work at Shopify, on the payments team."],
        "after": ["Quick update on my end: I accepted an offer from Atlassian and started there two weeks ago."],
        "query": "What company does the user work for?",
        "new": ["atlassian"],
        "stale": ["works at shopify", "works for shopify", "payments team"],
    },
    {
        "name": "freelancer goes in-house at loomly",
        "lang": "en",
        "kind": "job",
        "before": ["I'm a freelance graphic designer, I work from home for a bunch of different clients."],
        "after": [
            "btw I'm not freelancing anymore — "
            "I took a full-time in-house job as a product designer at a startup called Loomly."
        ],
        "query": "What does the user do for a living?",
        "new": ["loomly"],
        "stale": ["is a freelance", "works as a freelance", "different clients", "works from home for"],
    },
    {
        "name": "weekly grocery budget raised",
        "lang": "en",
        "kind": "value",
        "before": ["I try to keep my weekly grocery budget at $120."],
        "after": ["Groceries have gotten so expensive — my weekly grocery budget is $150 now."],
        "query": "What is the user's weekly grocery budget?",
        "new": ["150"],
        "stale": ["at $120", "is $120", "of $120"],
    },
    {
        "name": "office parking spot reassigned",
        "lang": "en",
        "kind": "value",
        "before": ["My parking spot at the office is P2-17, on the second underground level."],
        "after": ["They reshuffled parking at work last week, so I'm in spot B4-03 now."],
        "query": "Which parking spot does the user have at work?",
        "new": ["b4-03"],
        "stale": [
            "is p2-17",
            "has spot p2-17",
            "has parking spot p2-17",
            "in spot p2-17",
            "parks in p2-17",
            "second underground level",
        ],
    },
    {
        "name": "daughter priya kindergarten said twice",
        "lang": "en",
        "kind": "restated",
        "before": ["My daughter Priya is starting kindergarten this fall."],
        "after": ["Priya, my little girl, begins kindergarten in September — can you help me plan her first week?"],
        "query": "What's the name of the user's daughter?",
        "new": ["priya"],
        "stale": [],
    },
    {
        "name": "lactose intolerance said twice",
        "lang": "en",
        "kind": "restated",
        "before": ["I'm lactose intolerant, so no regular milk for me."],
        "after": ["Reminder that dairy doesn't agree with me — I'm lactose intolerant."],
        "query": "Does the user have any dietary restrictions?",
        "new": ["lactose"],
        "stale": [],
    },
    {
        "name": "anniversary date said twice",
        "lang": "en",
        "kind": "restated",
        "before": ["Our wedding anniversary is on June 14th."],
        "after": ["btw our anniversary is June 14, don't let me forget it this year."],
        "query": "When is the user's wedding anniversary?",
        "new": ["june 14", "14 june", "14th of june", "6/14", "06-14"],
        "stale": [],
    },
    {
        "name": "doesn't play guitar anymore",
        "lang": "en",
        "kind": "contradiction",
        "before": ["I play the guitar in a weekend band with some old friends."],
        "after": ["I don't play guitar anymore. I sold it last summer and left the band."],
        "query": "Does the user play guitar?",
        "new": ["n't play guitar", "not play guitar", "no longer play", "stopped playing", "sold", "quit"],
        "stale": ["user plays guitar", "user plays the guitar", "user plays in a weekend band"],
    },
    {
        "name": "off sushi after food poisoning",
        "lang": "en",
        "kind": "contradiction",
        "before": ["I'm a big fan of sushi, I could eat it every day."],
        "after": [
            "Honestly I'm off sushi now — after a bad bout of food poisoning in March I can't even look at raw fish."
        ],
        "query": "Does the user like sushi?",
        "new": [
            "off sushi",
            "no longer",
            "n't like sushi",
            "not like sushi",
            "dislikes sushi",
            "avoids sushi",
            "food poisoning",
            "raw fish",
        ],
        "stale": [
            "is a big fan of sushi",
            "user loves sushi",
            "user likes sushi",
            "could eat sushi every day",
            "could eat it every day",
        ],
    },
    {
        "name": "开车改坐地铁通勤",
        "lang": "zh",
        "kind": "preference",
        "before": ["我平时都是开车上班的。"],
        "after": ["对了，从上个月开始我改坐地铁上班了，开车实在太堵。"],
        "query": "用户怎么去上班？",
        "new": ["地铁"],
        "stale": ["用户开车上班", "用户平时开车", "用户通勤开车", "用户每天开车", "通勤方式是开车"],
    },
    {
        "name": "周杰伦换成古典音乐",
        "lang": "zh",
        "kind": "preference",
        "before": ["我特别喜欢听周杰伦的歌，每天都单曲循环。"],
        "after": ["最近口味变了，现在基本只听古典音乐，尤其是巴赫。"],
        "query": "用户现在喜欢听什么音乐？",
        "new": ["古典", "巴赫"],
        "stale": ["用户喜欢听周杰伦", "用户特别喜欢听周杰伦", "用户喜欢周杰伦", "单曲循环"],
    },
    {
        "name": "西安搬到青岛",
        "lang": "zh",
        "kind": "move",
        "before": ["我住在西安，在高新区租的房子。"],
        "after": ["上周刚搬完家，现在住在青岛了，离海边很近。"],
        "query": "用户住在哪个城市？",
        "new": ["青岛"],
        "stale": ["用户住在西安", "高新区"],
    },
    {
        "name": "武汉毕业回长沙",
        "lang": "zh",
        "kind": "move",
        "before": ["我在武汉读研，平时住在学校宿舍。"],
        "after": ["我已经毕业离开武汉了，现在回长沙老家住。"],
        "query": "用户现在住在哪里？",
        "new": ["长沙"],
        "stale": ["用户住在武汉", "住在学校宿舍", "用户在武汉读"],
    },
    {
        "name": "苏州改为厦门定居",
        "lang": "zh",
        "kind": "move",
        "before": ["我们一家住在苏州工业园区。"],
        "after": ["现在改成在厦门定居了，苏州那套房子去年年底就卖掉了。"],
        "query": "用户一家定居在哪里？",
        "new": ["厦门"],
        "stale": ["用户住在苏州", "一家住在苏州", "家住苏州", "工业园区"],
    },
    {
        "name": "京东跳槽网易",
        "lang": "zh",
        "kind": "job",
        "before": ["我在京东做运营，已经三年了。"],
        "after": ["我已经不在京东干了，上个月入职了网易，还是做运营。"],
        "query": "用户在哪家公司工作？",
        "new": ["网易"],
        "stale": ["用户在京东做", "用户在京东工作", "就职于京东", "任职于京东"],
    },
    {
        "name": "数学老师转行课程研发",
        "lang": "zh",
        "kind": "job",
        "before": ["我是中学数学老师，在一所公立学校教初二。"],
        "after": ["跟你说一下，我今年暑假辞职了，现在在猿辅导做课程研发。"],
        "query": "用户现在做什么工作？",
        "new": ["猿辅导"],
        "stale": ["用户是中学数学老师", "用户是一名中学数学老师", "教初二", "用户在公立学校"],
    },
    {
        "name": "工位从7楼换到12楼",
        "lang": "zh",
        "kind": "value",
        "before": ["我的工位在7楼A区，靠窗那排。"],
        "after": ["我们部门上周整体搬了，我的工位现在在12楼C区。"],
        "query": "用户的工位在哪里？",
        "new": ["12楼", "十二楼"],
        "stale": ["工位在7楼", "工位位于7楼", "工位是7楼", "靠窗"],
    },
    {
        "name": "体重降到76公斤",
        "lang": "zh",
        "kind": "value",
        "before": ["我现在体重82公斤，目标是减到75。"],
        "after": ["好消息！我现在已经瘦到76公斤了。"],
        "query": "用户现在的体重是多少？",
        "new": ["76"],
        "stale": ["体重82", "体重是82", "体重为82", "现在82公斤"],
    },
    {
        "name": "年会改期到1月25号",
        "lang": "zh",
        "kind": "value",
        "before": ["我们公司年会定在1月18号，在希尔顿酒店办。"],
        "after": ["年会改期了，推迟到1月25号，地点不变。"],
        "query": "用户公司的年会是哪天？",
        "new": ["25"],
        "stale": ["定在1月18", "是1月18", "于1月18", "1月18号举行", "1月18日举行", "1月18号在"],
    },
    {
        "name": "血型O型说了两次",
        "lang": "zh",
        "kind": "restated",
        "before": ["我是O型血。"],
        "after": ["顺便说一下，我的血型是O型，体检表上要填。"],
        "query": "用户是什么血型？",
        "new": ["o型"],
        "stale": [],
    },
    {
        "name": "周三晚上日语课说了两次",
        "lang": "zh",
        "kind": "restated",
        "before": ["我每周三晚上要上日语课。"],
        "after": ["对了，周三晚上我有日语课，别给我安排别的事。"],
        "query": "用户周三晚上有什么安排？",
        "new": ["日语"],
        "stale": [],
    },
    {
        "name": "其实不打羽毛球了",
        "lang": "zh",
        "kind": "contradiction",
        "before": ["我很喜欢打羽毛球，每周都打。"],
        "after": ["其实我现在不打羽毛球了，膝盖受伤以后就放下了。"],
        "query": "用户打羽毛球吗？",
        "new": ["不打羽毛球", "不再打", "已经不打", "停止打羽毛球", "膝盖"],
        "stale": ["用户很喜欢打羽毛球", "用户喜欢打羽毛球", "每周都打羽毛球", "每周都打"],
    },
    {
        "name": "热带鱼送人了不养宠物",
        "lang": "zh",
        "kind": "contradiction",
        "before": ["我养了一缸热带鱼，有二十多条。"],
        "after": ["那缸热带鱼我已经送人了，现在家里什么宠物都没养。"],
        "query": "用户养了什么宠物？",
        "new": ["送人", "没养", "没有养", "不养", "没有宠物", "无宠物"],
        "stale": ["用户养热带鱼", "用户养着", "用户有一缸", "有二十多条"],
    },
    {
        "name": "早就不冥想了",
        "lang": "zh",
        "kind": "contradiction",
        "before": ["我每天早上都会冥想二十分钟。"],
        "after": ["其实我早就不冥想了，坚持不下来。"],
        "query": "用户有冥想的习惯吗？",
        "new": ["不冥想", "不再冥想", "没有冥想", "停止冥想", "放弃冥想", "坚持不下来", "没坚持"],
        "stale": ["用户每天早上都会冥想", "用户每天早上冥想", "用户每天冥想", "冥想二十分钟", "冥想20分钟"],
    },
    # --- a fourth probe: 30 more by another helper that saw neither the rules nor any scenario (only
    # this file's format), measured on the code that passes the three probes above: 3/30 (2/30 on
    # the code before any probe); the fixes it led to are in their commit.
    {
        "name": "window seat to aisle seat",
        "lang": "en",
        "kind": "preference",
        "before": ["When I fly I always grab a window seat, I love watching the clouds go by."],
        "after": [
            "Can you note that I want aisle seats from now on? Since the knee surgery I need to get up and "
            "stretch a lot on long flights."
        ],
        "query": "What kind of seat should I book for the user's flight?",
        "new": ["aisle"],
        "stale": [
            "always grabs a window",
            "always books a window",
            "user prefers window",
            "user prefers a window",
            "user likes window",
            "loves watching the clouds",
        ],
    },
    {
        "name": "steak well done to medium-rare",
        "lang": "en",
        "kind": "preference",
        "before": ["Steak has to be well done for me, I can't stand any pink in the middle."],
        "after": [
            "Funny story, my girlfriend converted me — I order my steak medium-rare these days and I'm never "
            "going back."
        ],
        "query": "How does the user like their steak cooked?",
        "new": ["medium-rare", "medium rare"],
        "stale": [
            "user likes steak well done",
            "user prefers steak well done",
            "user likes their steak well done",
            "user prefers their steak well done",
            "user eats steak well done",
            "steak has to be well done",
            "can't stand any pink",
            "cannot stand any pink",
        ],
    },
    {
        "name": "notion notes moved to obsidian",
        "lang": "en",
        "kind": "preference",
        "before": ["I keep literally all my notes in Notion, it's basically my second brain."],
        "after": [
            "So over the holidays I migrated my whole notes setup to Obsidian. Notion just got too sluggish once "
            "I had a few thousand pages."
        ],
        "query": "Which app does the user take notes in?",
        "new": ["obsidian"],
        "stale": [
            "keeps all notes in notion",
            "keeps all their notes in notion",
            "keeps all of their notes in notion",
            "keeps literally all",
            "user uses notion",
            "notion is the user's second brain",
            "notion is user's second brain",
        ],
    },
    {
        "name": "王者荣耀卸了改玩塞尔达",
        "lang": "zh",
        "kind": "preference",
        "before": ["下班回家第一件事就是开一把王者荣耀，一打就是两三个小时。"],
        "after": ["王者早卸载了，这阵子迷上了《塞尔达》，每天睡前玩一会儿。"],
        "query": "用户平时玩什么游戏？",
        "new": ["塞尔达"],
        "stale": [
            "用户打王者荣耀",
            "用户玩王者荣耀",
            "用户喜欢玩王者",
            "用户喜欢打王者",
            "开一把王者",
            "一打就是两三个小时",
        ],
    },
    {
        "name": "连锁酒店换成民宿",
        "lang": "zh",
        "kind": "preference",
        "before": ["出去旅游一般都住连锁酒店，干净又省心。"],
        "after": ["现在出门更愿意订民宿了，能体验一下当地生活，酒店住多了觉得都一个样。"],
        "query": "用户旅游时喜欢住哪种地方？",
        "new": ["民宿"],
        "stale": [
            "用户一般住连锁酒店",
            "一般都住连锁酒店",
            "用户住连锁酒店",
            "用户喜欢住连锁酒店",
            "用户旅游住连锁酒店",
        ],
    },
    {
        "name": "portland to halifax",
        "lang": "en",
        "kind": "move",
        "before": ["I'm in Portland, Oregon — been here about six years now."],
        "after": [
            "The last boxes are finally unpacked in Halifax! Still can't believe we pulled off a cross-border "
            "move with two kids."
        ],
        "query": "Where does the user live?",
        "new": ["halifax"],
        "stale": [
            "user lives in portland",
            "user is based in portland",
            "user is in portland",
            "user is living in portland",
        ],
    },
    {
        "name": "leeds flat to cottage outside york",
        "lang": "en",
        "kind": "move",
        "before": ["Our flat's in Leeds city centre, right by the train station."],
        "after": [
            "We've swapped city life for a little cottage just outside York — way quieter, and my commute is "
            "only forty minutes."
        ],
        "query": "Where is the user's home?",
        "new": ["york"],
        "stale": [
            "user lives in leeds",
            "user is based in leeds",
            "flat is in leeds",
            "flat's in leeds",
            "by the train station",
        ],
    },
    {
        "name": "南京鼓楼搬到合肥",
        "lang": "zh",
        "kind": "move",
        "before": ["我家在南京鼓楼区，离地铁站走路五分钟。"],
        "after": ["已经在合肥安顿下来了，新房子比南京那套大了不少，就是还没认全路。"],
        "query": "用户现在住在哪个城市？",
        "new": ["合肥"],
        "stale": ["用户住在南京", "用户家在南京", "用户的家在南京", "用户在南京", "离地铁站走路五分钟"],
    },
    {
        "name": "重庆全家搬去昆明",
        "lang": "zh",
        "kind": "move",
        "before": ["我现在住重庆渝北，夏天热得受不了。"],
        "after": ["跟你说，年初我们全家搬到昆明了，四季如春，舒服太多。"],
        "query": "用户住在哪里？",
        "new": ["昆明"],
        "stale": ["用户住重庆", "用户住在重庆", "用户现在住重庆", "用户现在住在重庆", "用户在重庆", "热得受不了"],
    },
    {
        "name": "天津外派新加坡",
        "lang": "zh",
        "kind": "move",
        "before": ["我住在天津，每天坐城际去北京上班。"],
        "after": ["公司把我外派到新加坡了，这边的公寓上周刚租好，估计要待三年。"],
        "query": "用户目前住在哪个城市？",
        "new": ["新加坡"],
        "stale": ["用户住在天津", "用户在天津", "坐城际", "去北京上班"],
    },
    {
        "name": "barista to electrician apprentice",
        "lang": "en",
        "kind": "job",
        "before": ["I'm a barista at a little café downtown called Grindhouse."],
        "after": [
            "Hung up the apron for good — I'm three weeks into an electrician apprenticeship with Volt & Sons "
            "and loving it."
        ],
        "query": "What does the user do for work?",
        "new": ["electrician", "volt"],
        "stale": [
            "user is a barista",
            "user works as a barista",
            "user works at grindhouse",
            "user works at a little café",
        ],
    },
    {
        "name": "left bain, with the transit authority now",
        "lang": "en",
        "kind": "job",
        "before": ["I'm a management consultant at Bain, so I'm on the road most weeks."],
        "after": [
            "Left Bain back in April. I'm with the city's transit authority now, doing network planning — no "
            "more Monday-morning flights!"
        ],
        "query": "Who is the user's employer?",
        "new": ["transit"],
        "stale": [
            "user is a management consultant",
            "user is a consultant",
            "user works at bain",
            "user works for bain",
            "user is employed at bain",
            "user is employed by bain",
            "on the road most weeks",
        ],
    },
    {
        "name": "phd at rice then genentech",
        "lang": "en",
        "kind": "job",
        "before": ["I'm doing my PhD in chemistry at Rice University."],
        "after": ["Defended in May 🎉 and I've just started as a research scientist at Genentech."],
        "query": "What is the user's current job?",
        "new": ["genentech"],
        "stale": [
            "is doing a phd",
            "is doing their phd",
            "is doing her phd",
            "is doing his phd",
            "is doing my phd",
            "is a phd student",
            "is pursuing a phd",
            "user is a chemistry phd student",
        ],
    },
    {
        "name": "阿里离职去小米报到",
        "lang": "zh",
        "kind": "job",
        "before": ["我在阿里巴巴做前端开发，主要写React。"],
        "after": ["阿里那边上个月办完离职了，下周一去小米报到，还是做前端。"],
        "query": "用户在哪家公司上班？",
        "new": ["小米"],
        "stale": [
            "用户在阿里巴巴做",
            "用户在阿里巴巴工作",
            "用户在阿里做",
            "用户在阿里工作",
            "用户就职于阿里",
            "用户任职于阿里",
        ],
    },
    {
        "name": "银行柜员辞职开烘焙店",
        "lang": "zh",
        "kind": "job",
        "before": ["我在工商银行当柜员，每天数钱数到手软。"],
        "after": ["银行的活儿辞了，和朋友合伙开了家烘焙店，刚开业两周，累但开心。"],
        "query": "用户现在做什么工作？",
        "new": ["烘焙"],
        "stale": [
            "用户在工商银行当",
            "用户在工商银行工作",
            "用户是工商银行",
            "用户是柜员",
            "用户是一名柜员",
            "用户在银行当柜员",
            "数钱数到手软",
        ],
    },
    {
        "name": "studio alarm code rotated",
        "lang": "en",
        "kind": "value",
        "before": ["The alarm code for my pottery studio is 4471, jot that down in case I blank on it."],
        "after": ["The security company rotated the studio alarm code this morning, it's 8023 now."],
        "query": "What's the alarm code for the user's studio?",
        "new": ["8023"],
        "stale": ["4471"],
    },
    {
        "name": "rent dropped on lease renewal",
        "lang": "en",
        "kind": "value",
        "before": ["My rent is $1,850 a month, which is honestly brutal for a one-bedroom."],
        "after": ["Good news for once: renewed the lease and the landlord actually dropped it to $1,750."],
        "query": "How much rent does the user pay?",
        "new": ["1,750", "1750"],
        "stale": [
            "is $1,850",
            "is $1850",
            "rent of $1,850",
            "rent of $1850",
            "pays $1,850",
            "pays $1850",
            "is 1850",
            "is 1,850",
        ],
    },
    {
        "name": "信用卡还款日改到3号",
        "lang": "zh",
        "kind": "value",
        "before": ["我的信用卡每个月15号还款，到时候提醒我一下。"],
        "after": ["银行把账单日调了，还款日变成每月3号了，提醒时间也跟着改一下。"],
        "query": "用户的信用卡哪天还款？",
        "new": ["3号", "3日", "三号"],
        "stale": [
            "用户每个月15号还款",
            "用户每月15号还款",
            "信用卡每个月15号",
            "信用卡每月15号",
            "还款日是15",
            "还款日为15",
            "还款日是每月15",
            "还款日为每月15",
        ],
    },
    {
        "name": "儿子重新分班到五班",
        "lang": "zh",
        "kind": "value",
        "before": ["我儿子在实验小学读二年级三班。"],
        "after": ["开学重新分班了，小家伙现在在二年级五班，班主任也换了。"],
        "query": "用户的儿子在哪个班？",
        "new": ["五班", "5班"],
        "stale": [
            "在二年级三班",
            "读二年级三班",
            "是二年级三班",
            "在实验小学二年级三班",
            "在2年级3班",
            "二年级三班读书",
        ],
    },
    {
        "name": "降压药加到一天两片",
        "lang": "zh",
        "kind": "value",
        "before": ["医生让我每天早上吃一片降压药。"],
        "after": ["复查完医生给加了量，降压药改成一天两片，早晚各一片。"],
        "query": "用户每天吃几片降压药？",
        "new": ["两片", "2片", "早晚各"],
        "stale": [
            "用户每天早上吃一片",
            "用户每天吃一片",
            "用户每天服用一片",
            "每天早上吃一片降压药",
            "每天吃一片降压药",
        ],
    },
    {
        "name": "husband tomasz said twice",
        "lang": "en",
        "kind": "restated",
        "before": ["My husband's name is Tomasz, he's the cook in our house."],
        "after": ["Tomasz — that's my husband — wants to plan a weekend away for us, can you throw out some ideas?"],
        "query": "What is the name of the user's husband?",
        "new": ["tomasz"],
        "stale": [],
    },
    {
        "name": "type 1 diabetic said twice",
        "lang": "en",
        "kind": "restated",
        "before": ["I have type 1 diabetes, so I check my blood sugar a lot."],
        "after": ["As a type 1 diabetic, what snacks are good to keep in my bag for hikes?"],
        "query": "Does the user have any medical conditions?",
        "new": ["diabet"],
        "stale": [],
    },
    {
        "name": "left-handed said twice",
        "lang": "en",
        "kind": "restated",
        "before": ["I'm left-handed, which makes a lot of kitchen tools awkward."],
        "after": ["Being a lefty, which kind of scissors should I buy for my sewing?"],
        "query": "Which hand does the user write with?",
        "new": ["left-handed", "left handed", "lefty", "left hand"],
        "stale": [],
    },
    {
        "name": "老家烟台说了两次",
        "lang": "zh",
        "kind": "restated",
        "before": ["我老家是山东烟台的。"],
        "after": ["过年要回烟台老家，帮我看看腊月二十八左右的高铁票。"],
        "query": "用户的老家在哪里？",
        "new": ["烟台"],
        "stale": [],
    },
    {
        "name": "女儿朵朵说了两次",
        "lang": "zh",
        "kind": "restated",
        "before": ["我闺女叫朵朵，今年四岁了。"],
        "after": ["朵朵是我女儿，想给她报个舞蹈班，四岁的孩子学什么舞合适？"],
        "query": "用户的女儿叫什么名字？",
        "new": ["朵朵"],
        "stale": [],
    },
    {
        "name": "stopped volunteering at the shelter",
        "lang": "en",
        "kind": "contradiction",
        "before": ["I volunteer at the animal shelter every Saturday morning, walking the dogs."],
        "after": [
            "I had to give up the shelter volunteering — my Saturdays are all about looking after my dad these days."
        ],
        "query": "Does the user volunteer anywhere?",
        "new": [
            "gave up",
            "give up",
            "stopped volunteering",
            "no longer volunteer",
            "n't volunteer",
            "not volunteer",
            "his dad",
            "her dad",
            "their dad",
            "father",
        ],
        "stale": [
            "user volunteers at",
            "volunteers at the animal shelter every",
            "user volunteers every saturday",
            "walks the dogs at the",
        ],
    },
    {
        "name": "cancelled the gym membership",
        "lang": "en",
        "kind": "contradiction",
        "before": ["I've got a membership at Anytime Fitness and I go like four times a week."],
        "after": [
            "Cancelled the gym in January, couldn't justify the cost anymore. It's just home workouts and long "
            "walks for me now."
        ],
        "query": "Does the user have a gym membership?",
        "new": ["cancel", "home workout", "no longer", "doesn't have a gym", "does not have a gym"],
        "stale": [
            "user has a membership",
            "user has a gym membership",
            "user is a member",
            "goes four times a week",
            "goes to the gym four times",
            "goes like four times",
        ],
    },
    {
        "name": "电动车被偷了没再买",
        "lang": "zh",
        "kind": "contradiction",
        "before": ["我有一辆电动车，每天骑着去公司。"],
        "after": ["电动车上个月在小区楼下被偷了，后来也没再买，现在都走路去公司。"],
        "query": "用户有电动车吗？",
        "new": ["被偷", "没再买", "没有电动车", "走路"],
        "stale": ["用户有一辆电动车", "用户每天骑电动车", "每天骑着去公司", "用户骑电动车去公司"],
    },
    {
        "name": "钢琴课停了",
        "lang": "zh",
        "kind": "contradiction",
        "before": ["最近在学钢琴，每周上两节课，周末在家练。"],
        "after": ["钢琴课其实停了快半年了，工作一忙就顾不上，琴也好久没碰了。"],
        "query": "用户在学钢琴吗？",
        "new": ["停了", "不学", "不再学", "没碰", "停止", "暂停", "顾不上"],
        "stale": ["用户在学钢琴", "用户正在学钢琴", "用户最近在学钢琴", "每周上两节", "每周两节", "周末在家练"],
    },
    {
        "name": "单身到脱单",
        "lang": "zh",
        "kind": "contradiction",
        "before": ["我目前单身，家里人天天催我找对象。"],
        "after": ["跟你说个好消息，终于脱单了！和部门一个同事在一起三个月了。"],
        "query": "用户有对象吗？",
        "new": ["脱单", "恋爱", "男朋友", "女朋友", "在一起", "交往"],
        "stale": ["用户目前单身", "用户单身", "用户是单身", "用户目前是单身", "天天催"],
    },
    # --- a fifth probe, by a third helper that saw neither the rules nor any scenario, written after the
    # fixes the fourth led to and measured before any change of its own: 8/30 (4/30 on the code before
    # any probe, 7/30 before the fourth probe's fixes). Not tuned on but for two small readings (an
    # em dash after a state, 太太 as a relative); its first figure is what to expect on unseen phrasing.
    {
        "name": "chrome to firefox",
        "lang": "en",
        "kind": "preference",
        "before": ["I always use Chrome as my browser, on every machine."],
        "after": ["I switched my browser to Firefox last week."],
        "query": "Which web browser does the user use?",
        "new": ["firefox"],
        "stale": [
            "uses chrome",
            "prefers chrome",
            "browser is chrome",
            "chrome as their browser",
            "chrome as his browser",
            "chrome as her browser",
        ],
    },
    {
        "name": "beach holidays to mountain hiking",
        "lang": "en",
        "kind": "preference",
        "before": ["For holidays I'm a beach person — give me a sunbed and a paperback and I'm happy for two weeks."],
        "after": [
            "Lately I'd much rather spend my time off hiking in the mountains; lying on a beach all day bores me "
            "to tears now."
        ],
        "query": "What kind of holiday should I suggest to the user?",
        "new": ["mountain", "hiking"],
        "stale": [
            "is a beach person",
            "prefers beach",
            "prefers the beach",
            "likes beach holidays",
            "sunbed and a paperback",
        ],
    },
    {
        "name": "moleskine planner to todoist",
        "lang": "en",
        "kind": "preference",
        "before": ["I plan my whole week by hand in a Moleskine planner, I like the feel of pen on paper."],
        "after": ["Paper planner's been gathering dust since spring — Todoist runs my whole life now."],
        "query": "What does the user use to plan their week?",
        "new": ["todoist"],
        "stale": [
            "by hand in a moleskine",
            "uses a moleskine",
            "plans their whole week by hand",
            "plans his whole week by hand",
            "plans her whole week by hand",
            "feel of pen on paper",
        ],
    },
    {
        "name": "dublin to galway",
        "lang": "en",
        "kind": "move",
        "before": ["I live in Dublin, just off Grafton Street."],
        "after": ["I moved to Galway at the start of the month."],
        "query": "Where does the user live?",
        "new": ["galway"],
        "stale": ["lives in dublin", "based in dublin", "grafton street"],
    },
    {
        "name": "brooklyn walk-up to farmhouse near asheville",
        "lang": "en",
        "kind": "move",
        "before": ["Home is a tiny studio in Brooklyn, fourth-floor walk-up, no elevator."],
        "after": [
            "Ever since we swapped Brooklyn for a farmhouse outside Asheville, my mornings are all chickens and "
            "no subway."
        ],
        "query": "Where does the user live?",
        "new": ["asheville"],
        "stale": [
            "lives in brooklyn",
            "studio in brooklyn",
            "based in brooklyn",
            "fourth-floor walk-up",
            "fourth floor walk-up",
        ],
    },
    {
        "name": "ubisoft tester to spotify qa lead",
        "lang": "en",
        "kind": "job",
        "before": ["I'm a software tester at Ubisoft."],
        "after": ["I left Ubisoft and now I work at Spotify as a QA lead."],
        "query": "Where does the user work?",
        "new": ["spotify"],
        "stale": ["works at ubisoft", "works for ubisoft", "tester at ubisoft", "employed at ubisoft"],
    },
    {
        "name": "physics teacher to pfizer chemist",
        "lang": "en",
        "kind": "job",
        "before": ["I teach high-school physics, mostly to 15-year-olds."],
        "after": ["Traded the classroom for a lab coat — since October I'm a quality-control chemist at Pfizer."],
        "query": "What does the user do for a living?",
        "new": ["pfizer"],
        "stale": [
            "teaches high-school",
            "teaches high school",
            "is a physics teacher",
            "is a high-school physics",
            "is a high school physics",
            "works as a teacher",
            "15-year-olds",
        ],
    },
    {
        "name": "uber driver to county library",
        "lang": "en",
        "kind": "job",
        "before": ["I drive for Uber full time, mostly airport runs."],
        "after": [
            "First paycheck from the county library came in today — shelving books pays better than I expected, "
            "and no more airport traffic!"
        ],
        "query": "What is the user's job?",
        "new": ["library"],
        "stale": ["drives for uber", "works for uber", "is an uber driver", "works as an uber driver", "airport runs"],
    },
    {
        "name": "dentist appointment moved to the 16th",
        "lang": "en",
        "kind": "value",
        "before": ["My dentist appointment is on Thursday the 9th at 10am."],
        "after": ["The dental office called — they pushed me to the 16th, same time."],
        "query": "When is the user's dentist appointment?",
        "new": ["16th", "the 16", "16 at"],
        "stale": ["thursday the 9th", "is on the 9th", "on the 9th at", "9th at 10"],
    },
    {
        "name": "klm frequent flyer number",
        "lang": "en",
        "kind": "value",
        "before": ["My KLM frequent flyer number is KL448120, please keep it handy for bookings."],
        "after": [
            "KLM merged my accounts after some glitch on their side, so my frequent flyer number is KL907736 now."
        ],
        "query": "What is the user's KLM frequent flyer number?",
        "new": ["kl907736"],
        "stale": ["kl448120"],
    },
    {
        "name": "red-green colorblind said twice",
        "lang": "en",
        "kind": "restated",
        "before": ["I'm colorblind — red-green, specifically."],
        "after": ["As I mentioned, I'm red-green colorblind, so please don't rely on colors alone in charts for me."],
        "query": "Does the user have any issue with colors?",
        "new": ["colorblind", "color blind", "color-blind", "colourblind", "colour blind", "colour-blind", "red-green"],
        "stale": [],
    },
    {
        "name": "six foot four said twice",
        "lang": "en",
        "kind": "restated",
        "before": ["I'm 6'4\", so standard hotel beds are always a bit short for me."],
        "after": ["Being six foot four, which airlines have the most legroom in economy?"],
        "query": "How tall is the user?",
        "new": [
            "6'4",
            "6 ft 4",
            "6ft 4",
            "6ft4",
            "6 foot 4",
            "6 feet 4",
            "six foot four",
            "six feet four",
            "193 cm",
            "193cm",
        ],
        "stale": [],
    },
    {
        "name": "deaf in left ear said twice",
        "lang": "en",
        "kind": "restated",
        "before": ["I'm hard of hearing in my left ear, so phone calls in noisy places are tough."],
        "after": ["Left ear's the bad one, as you know — any tips for following conversations in loud restaurants?"],
        "query": "Does the user have a hearing problem?",
        "new": ["left ear"],
        "stale": [],
    },
    {
        "name": "no longer collects vinyl",
        "lang": "en",
        "kind": "contradiction",
        "before": ["I collect vinyl records, I've got about 400 of them."],
        "after": ["I don't collect vinyl anymore, I sold the whole collection."],
        "query": "Does the user collect records?",
        "new": ["n't collect", "not collect", "no longer collect", "stopped collecting", "sold"],
        "stale": [
            "user collects vinyl",
            "user collects records",
            "about 400 records",
            "about 400 vinyl",
            "about 400 of them",
            "has about 400",
        ],
    },
    {
        "name": "book club fizzled out",
        "lang": "en",
        "kind": "contradiction",
        "before": ["I'm in a book club that meets on the first Monday of every month."],
        "after": ["Book club fizzled out over the summer, nobody's organised a meeting since."],
        "query": "Is the user in a book club?",
        "new": [
            "fizzled",
            "no longer",
            "has ended",
            "club ended",
            "stopped",
            "disbanded",
            "not in a book club",
            "n't in a book club",
            "not met",
            "n't met",
            "no meeting",
        ],
        "stale": [
            "user is in a book club",
            "member of a book club",
            "belongs to a book club",
            "meets on the first monday",
            "first monday of every month",
            "first monday of each month",
        ],
    },
    {
        "name": "excel记账改用随手记",
        "lang": "zh",
        "kind": "preference",
        "before": ["我平时记账用Excel表格，每天晚上记一遍。"],
        "after": ["Excel太麻烦了，我现在改用随手记App记账了。"],
        "query": "用户用什么记账？",
        "new": ["随手记"],
        "stale": ["用户用excel", "用户平时用excel", "用户平时记账用excel", "记账用excel表格", "每天晚上记一遍"],
    },
    {
        "name": "周末宅家变露营",
        "lang": "zh",
        "kind": "preference",
        "before": ["周末我一般宅在家里打游戏，不爱出门。"],
        "after": ["这几个月周末基本都在外面露营，帐篷睡袋全置办齐了。"],
        "query": "用户周末一般做什么？",
        "new": ["露营"],
        "stale": ["宅在家", "不爱出门", "在家里打游戏", "在家打游戏"],
    },
    {
        "name": "郑州搬到大连",
        "lang": "zh",
        "kind": "move",
        "before": ["我住在郑州。"],
        "after": ["我上周搬到了大连。"],
        "query": "用户住在哪里？",
        "new": ["大连"],
        "stale": ["住在郑州", "家在郑州", "在郑州生活"],
    },
    {
        "name": "福州仓山退租去宁波",
        "lang": "zh",
        "kind": "move",
        "before": ["我在福州租房子住，房子在仓山区。"],
        "after": ["房子退了，现在跟男朋友一起住到宁波去了。"],
        "query": "用户现在住在哪个城市？",
        "new": ["宁波"],
        "stale": ["住在福州", "在福州租房", "在福州租", "仓山"],
    },
    {
        "name": "哈尔滨到三亚安家",
        "lang": "zh",
        "kind": "move",
        "before": ["我家在哈尔滨，冬天零下三十度是常事。"],
        "after": ["在三亚安家快两个月了，一年四季都能穿短袖，秋裤终于可以扔了。"],
        "query": "用户住在哪里？",
        "new": ["三亚"],
        "stale": ["家在哈尔滨", "住在哈尔滨", "在哈尔滨生活", "零下三十度"],
    },
    {
        "name": "拼多多换到携程",
        "lang": "zh",
        "kind": "job",
        "before": ["我在拼多多做数据分析。"],
        "after": ["我换工作了，现在在携程做数据分析。"],
        "query": "用户在哪家公司工作？",
        "new": ["携程"],
        "stale": ["在拼多多做", "在拼多多工作", "在拼多多上班", "就职于拼多多", "任职于拼多多"],
    },
    {
        "name": "出租车司机考上税务局",
        "lang": "zh",
        "kind": "job",
        "before": ["我是一名出租车司机，在市里跑了十年车了。"],
        "after": ["考了两年终于上岸了，下个月开始在区税务局上班，方向盘总算可以放下了。"],
        "query": "用户是做什么工作的？",
        "new": ["税务局"],
        "stale": ["用户是一名出租车", "用户是出租车司机", "用户开出租车", "跑了十年车"],
    },
    {
        "name": "幼儿园放学时间改到5点",
        "lang": "zh",
        "kind": "value",
        "before": ["我家小孩幼儿园放学时间是下午4点半。"],
        "after": ["幼儿园改了作息，放学时间变成下午5点了。"],
        "query": "用户孩子的幼儿园几点放学？",
        "new": ["5点", "五点", "17:00", "17点"],
        "stale": ["4点半", "四点半", "16:30", "4:30"],
    },
    {
        "name": "雅思重考7.5",
        "lang": "zh",
        "kind": "value",
        "before": ["我的雅思成绩是6.5分，申请学校有点不够用。"],
        "after": ["重考了一次，这回总分7.5。"],
        "query": "用户的雅思成绩是多少？",
        "new": ["7.5"],
        "stale": ["6.5"],
    },
    {
        "name": "步数目标调到一万二",
        "lang": "zh",
        "kind": "value",
        "before": ["我给自己定的每日步数目标是8000步。"],
        "after": ["8000步太轻松了，调成一万二了。"],
        "query": "用户每天的步数目标是多少？",
        "new": ["一万二", "12000", "12,000", "1万2", "1.2万", "一万两千"],
        "stale": [
            "目标是8000",
            "目标设的是8000",
            "目标为8000",
            "目标设为8000",
            "目标设定为8000",
            "每天8000步",
            "每日8000步",
        ],
    },
    {
        "name": "晕车说了两次",
        "lang": "zh",
        "kind": "restated",
        "before": ["我晕车很厉害，坐大巴超过一小时就难受。"],
        "after": ["提醒一下，我晕车很厉害，帮我安排行程的时候注意一下。"],
        "query": "用户坐车有什么需要注意的？",
        "new": ["晕车"],
        "stale": [],
    },
    {
        "name": "老公是消防员说了两次",
        "lang": "zh",
        "kind": "restated",
        "before": ["我先生是消防员，经常半夜出警。"],
        "after": ["老公又去队里值班了，干消防的就是这样，今晚我一个人带娃，有什么简单的晚饭推荐吗？"],
        "query": "用户的丈夫是做什么的？",
        "new": ["消防"],
        "stale": [],
    },
    {
        "name": "不喝奶茶了",
        "lang": "zh",
        "kind": "contradiction",
        "before": ["我喜欢喝奶茶，几乎每天一杯。"],
        "after": ["我不喝奶茶了，在控糖。"],
        "query": "用户喝奶茶吗？",
        "new": ["不喝奶茶", "不再喝奶茶", "戒了奶茶", "戒奶茶", "控糖"],
        "stale": ["用户喜欢喝奶茶", "几乎每天一杯", "每天一杯奶茶", "每天都喝奶茶"],
    },
    {
        "name": "书店兼职辞了",
        "lang": "zh",
        "kind": "contradiction",
        "before": ["我周末在一家书店兼职当店员。"],
        "after": ["书店那份兼职我已经辞了，周末想多陪陪家里人。"],
        "query": "用户周末有兼职吗？",
        "new": ["辞了", "辞掉", "辞去", "不再兼职", "不做兼职", "没有兼职", "不在书店", "陪陪家里人", "陪家人"],
        "stale": [
            "用户周末在一家书店兼职",
            "用户周末在书店兼职",
            "用户在书店兼职",
            "用户在一家书店兼职",
            "用户周末兼职",
        ],
    },
    {
        "name": "失眠好了褪黑素停了",
        "lang": "zh",
        "kind": "contradiction",
        "before": ["我每天晚上都失眠，得吃褪黑素才能睡着。"],
        "after": ["最近睡得特别好，褪黑素早就停了。"],
        "query": "用户睡眠怎么样，需要吃褪黑素吗？",
        "new": [
            "睡得特别好",
            "睡得很好",
            "睡眠很好",
            "睡眠好转",
            "停了",
            "不吃褪黑素",
            "不再吃",
            "停用",
            "不需要",
            "停止",
        ],
        "stale": ["每天晚上都失眠", "用户失眠", "得吃褪黑素", "需要吃褪黑素", "要吃褪黑素才能"],
    },
    # --- a sixth probe: 40 scenarios (20 English, 20 Chinese) by a fourth helper that read nothing of the
    # repository (only the fields of a scenario, in its prompt). Measured once on the code before the
    # session that added it (10/40) and on that session's code (10/40: its attribute changes were
    # written before the probe was seen); nothing was tuned on it.
    {
        "name": "editor vscode to neovim",
        "lang": "en",
        "kind": "preference",
        "before": ["I do pretty much all my coding in VS Code, got it set up exactly how I like it"],
        "after": [
            "ok I finally caved and went full neovim lol. took a whole weekend to get my config right but "
            "I'm not going back"
        ],
        "query": "What code editor does the user use?",
        "new": ["neovim", "nvim", "neo vim"],
        "stale": ["uses vs code", "uses vscode", "codes in vs code", "coding in vs code", "prefers vs code"],
    },
    {
        "name": "music spotify to apple",
        "lang": "en",
        "kind": "preference",
        "before": ["can you make me a Spotify playlist of chill 90s stuff? that's what I use for all my music"],
        "after": [
            "my sister added me to her family plan on apple music so I cancelled the other one, saves me "
            "like 11 bucks a month"
        ],
        "query": "Which music streaming service does the user use?",
        "new": ["apple music"],
        "stale": ["uses spotify", "spotify user", "listens on spotify", "music on spotify"],
    },
    {
        "name": "workout morning to night",
        "lang": "en",
        "kind": "preference",
        "before": ["I run every morning before work, usually out the door by 6"],
        "after": [
            "mornings are just not happening anymore with the baby lol. I've been doing my workouts at night "
            "once she goes down, usually around 9"
        ],
        "query": "When does the user usually work out?",
        "new": ["night", "evening", "9pm", "9 pm", "after the baby", "once she goes down", "after she goes"],
        "stale": ["runs every morning", "runs in the morning", "out the door by 6", "runs at 6", "runs before work"],
    },
    {
        "name": "notes notion to obsidian",
        "lang": "en",
        "kind": "preference",
        "before": ["I keep all my notes and to-dos in Notion, it's basically where my whole life lives"],
        "after": [
            "can you help me write a template for my daily note in Obsidian? want sections for tasks, "
            "meetings and a quick journal bit. been on it since I ditched the old setup last month"
        ],
        "query": "What app does the user use for notes?",
        "new": ["obsidian"],
        "stale": ["uses notion", "notes in notion", "to-dos in notion", "keeps notes in notion", "relies on notion"],
    },
    {
        "name": "austin to denver",
        "lang": "en",
        "kind": "move",
        "before": ["I live in Austin, so anything outdoors in August is basically a no-go lol"],
        "after": ["finally feel settled in Denver! the altitude is kicking my butt on runs though"],
        "query": "Where does the user live?",
        "new": ["denver", "colorado"],
        "stale": ["lives in austin", "based in austin", "living in austin", "austin resident", "resides in austin"],
    },
    {
        "name": "clapham to manchester",
        "lang": "en",
        "kind": "move",
        "before": ["Any good brunch spots near Clapham? I'm about 10 mins walk from the common"],
        "after": [
            "we ended up leaving London in the end — rent was just silly. new flat's in Ancoats, tiny but I "
            "love it, Manchester's been great so far"
        ],
        "query": "Where does the user live?",
        "new": ["manchester", "ancoats"],
        "stale": [
            "lives in clapham",
            "lives in london",
            "lives near clapham",
            "based in london",
            "living in london",
            "10 mins walk from the common",
        ],
    },
    {
        "name": "toronto to vancouver",
        "lang": "en",
        "kind": "move",
        "before": ["I'm in Toronto so please don't schedule anything before 9am my time"],
        "after": [
            "heads up I'm on Pacific time from now on, we relocated out west over the holidays. Vancouver "
            "rain is no joke"
        ],
        "query": "Where does the user live?",
        "new": ["vancouver", "pacific time", "british columbia"],
        "stale": [
            "lives in toronto",
            "based in toronto",
            "located in toronto",
            "living in toronto",
            "resides in toronto",
        ],
    },
    {
        "name": "shopify to stripe",
        "lang": "en",
        "kind": "job",
        "before": ["I'm a backend dev at Shopify, mostly Ruby stuff"],
        "after": ["first week at Stripe done 🎉 so much onboarding. miss rails a little but the team's great"],
        "query": "Where does the user work?",
        "new": ["stripe"],
        "stale": [
            "works at shopify",
            "dev at shopify",
            "developer at shopify",
            "engineer at shopify",
            "employed at shopify",
            "works for shopify",
        ],
    },
    {
        "name": "teacher to assistant principal",
        "lang": "en",
        "kind": "job",
        "before": ["I teach 7th grade science at Lincoln Middle, 5 periods a day"],
        "after": [
            "Got the assistant principal job!! so no more classroom for me starting this fall. way more meetings lol"
        ],
        "query": "What is the user's job?",
        "new": ["assistant principal", "vice principal", "ap at lincoln"],
        "stale": [
            "teaches 7th grade",
            "teaches seventh grade",
            "is a 7th grade science teacher",
            "is a science teacher",
            "5 periods a day",
        ],
    },
    {
        "name": "auditor to bakery owner",
        "lang": "en",
        "kind": "job",
        "before": ["I'm an auditor at Deloitte. busy season is brutal, I basically live at the office Jan-April"],
        "after": [
            "quit the big 4 life and opened a little bakery with my partner 🥐 the hours are worse honestly "
            "but I'm way happier"
        ],
        "query": "What does the user do for work?",
        "new": ["bakery", "baker", "runs a bakery", "owns a bakery"],
        "stale": [
            "auditor at deloitte",
            "works at deloitte",
            "works for deloitte",
            "is an auditor",
            "employed at deloitte",
        ],
    },
    {
        "name": "door code",
        "lang": "en",
        "kind": "value",
        "before": ["the code for my building's front door is 4471 btw, in case I forget it again"],
        "after": ["management reset all the door codes this week. mine's 9082 — can you remember that one instead"],
        "query": "What is the user's building door code?",
        "new": ["9082", "9 0 8 2"],
        "stale": ["code is 4471", "code: 4471", "code 4471", "door code is 4471", "is 4471"],
    },
    {
        "name": "dentist date moved",
        "lang": "en",
        "kind": "value",
        "before": ["I've got a dentist appointment March 14 at 3pm, remind me the day before?"],
        "after": ["dentist office called, they had to bump me a week later. same time though"],
        "query": "When is the user's dentist appointment?",
        "new": ["march 21", "21st", "21 march", "3/21", "mar 21", "a week later"],
        "stale": [
            "appointment on march 14",
            "appointment march 14",
            "march 14 at 3",
            "march 14th at 3",
            "on march 14",
            "3/14",
        ],
    },
    {
        "name": "rent went up",
        "lang": "en",
        "kind": "value",
        "before": ["my rent is $1,850 a month for a one bed, which is honestly not bad for this area"],
        "after": ["landlord bumped the rent by 150 at renewal 🙄 still cheaper than moving I guess"],
        "query": "How much is the user's rent?",
        "new": ["2,000", "2000", "$2k", "2k", "two thousand"],
        "stale": [
            "rent is $1,850",
            "rent is 1850",
            "rent is $1850",
            "pays $1,850",
            "pays 1850",
            "1,850 a month",
            "1850 a month",
            "1,850 per month",
        ],
    },
    {
        "name": "peanut allergy restated",
        "lang": "en",
        "kind": "restated",
        "before": ["I'm allergic to peanuts, like carry-an-epipen allergic"],
        "after": ["oh make sure that satay recipe swaps out the peanut butter, I literally can't have any of it"],
        "query": "What food allergies does the user have?",
        "new": ["peanut"],
        "stale": [],
    },
    {
        "name": "vegetarian restated",
        "lang": "en",
        "kind": "restated",
        "before": ["fyi I'm vegetarian, have been for about ten years"],
        "after": ["no meat for me please when you suggest dinners — haven't eaten it in a decade"],
        "query": "What are the user's dietary restrictions?",
        "new": ["vegetarian", "no meat", "doesn't eat meat", "does not eat meat", "meat-free"],
        "stale": [],
    },
    {
        "name": "dog biscuit restated",
        "lang": "en",
        "kind": "restated",
        "before": ["My dog's name is Biscuit, he's a 4 year old beagle"],
        "after": ["Biscuit (my beagle) ate another sock last night, should I be worried??"],
        "query": "What is the user's dog's name?",
        "new": ["biscuit"],
        "stale": [],
    },
    {
        "name": "birthday restated",
        "lang": "en",
        "kind": "restated",
        "before": ["my birthday is October 3rd, for the record"],
        "after": ["yep I'm a libra, 3rd of october baby 🎂 so plan the party around that weekend"],
        "query": "When is the user's birthday?",
        "new": ["october 3", "oct 3", "3 october", "3rd of october", "10/3", "october third"],
        "stale": [],
    },
    {
        "name": "quit smoking, three months in",
        "lang": "en",
        "kind": "contradiction",
        "before": ["I smoke about half a pack a day, trying to cut down but it's hard"],
        "after": ["3 months without a cigarette as of today!! the patches actually worked"],
        "query": "Does the user smoke?",
        "new": [
            "quit",
            "stopped",
            "no longer",
            "smoke-free",
            "doesn't smoke",
            "does not smoke",
            "without a cigarette",
            "ex-smoker",
            "former smoker",
        ],
        "stale": ["smokes about half a pack", "smokes half a pack", "is a smoker", "smokes daily", "currently smokes"],
    },
    {
        "name": "sold the car",
        "lang": "en",
        "kind": "contradiction",
        "before": ["I drive a 2015 Honda Civic, it's got like 120k miles on it"],
        "after": [
            "sold the civic last weekend. turns out you really don't need a car in this neighborhood, bike + "
            "bus does the job"
        ],
        "query": "What car does the user drive?",
        "new": [
            "sold",
            "no longer",
            "doesn't have a car",
            "does not have a car",
            "doesn't own a car",
            "does not own a car",
            "no car",
            "car-free",
            "without a car",
        ],
        "stale": ["drives a 2015", "drives a honda", "drives a civic", "owns a 2015", "owns a honda", "owns a civic"],
    },
    {
        "name": "book club ended",
        "lang": "en",
        "kind": "contradiction",
        "before": [
            "I'm in a book club that meets the first Thursday of every month, we're reading Tomorrow and "
            "Tomorrow and Tomorrow right now"
        ],
        "after": ["book club kinda fizzled out tbh. nobody could ever agree on a date so we just... stopped"],
        "query": "Is the user part of a book club?",
        "new": [
            "fizzled",
            "no longer",
            "stopped",
            "ended",
            "disbanded",
            "not in a book club",
            "isn't in a book club",
            "is not in a book club",
        ],
        "stale": [
            "is in a book club",
            "member of a book club",
            "book club that meets",
            "meets the first thursday",
            "attends a book club",
        ],
    },
    {
        "name": "iphone换华为",
        "lang": "zh",
        "kind": "preference",
        "before": ["一直用的iPhone，好多年了，生态离不开"],
        "after": ["入了台Mate 60，鸿蒙用着还挺顺手，苹果那台给我妈了"],
        "query": "用户用的是什么手机？",
        "new": ["mate 60", "mate60", "华为", "鸿蒙"],
        "stale": ["用iphone", "使用iphone", "用苹果手机", "iphone用户", "使用苹果手机"],
    },
    {
        "name": "不吃辣变无辣不欢",
        "lang": "zh",
        "kind": "preference",
        "before": ["我不太能吃辣，微辣都受不了，点菜帮我避开辣的"],
        "after": ["在四川待了半年，现在无辣不欢了哈哈，点外卖中辣起步"],
        "query": "用户能吃辣吗？",
        "new": ["无辣不欢", "中辣", "很能吃辣", "变得能吃辣", "嗜辣"],
        "stale": ["不太能吃辣", "微辣都受不了", "受不了辣", "避开辣"],
    },
    {
        "name": "开车改地铁",
        "lang": "zh",
        "kind": "preference",
        "before": ["每天开车上班，单程四十分钟，堵起来一个小时"],
        "after": ["油价太贵了，最近都坐地铁去公司，车放楼下吃灰"],
        "query": "用户平时怎么通勤？",
        "new": ["地铁"],
        "stale": ["开车上班", "开车通勤", "自驾上班", "驾车上班"],
    },
    {
        "name": "杭州到成都",
        "lang": "zh",
        "kind": "move",
        "before": ["我在杭州，最近梅雨季天天下雨烦死了"],
        "after": ["来成都快一个月了，火锅吃得我胖了三斤"],
        "query": "用户住在哪里？",
        "new": ["成都"],
        "stale": ["用户住在杭州", "住在杭州", "现居杭州", "在杭州生活", "居住在杭州"],
    },
    {
        "name": "海淀到望京",
        "lang": "zh",
        "kind": "move",
        "before": ["住海淀，五道口附近，周末想找个地方爬山"],
        "after": ["刚搬去望京，离新公司近，通勤从一个半小时变二十分钟，爽"],
        "query": "用户住在哪里？",
        "new": ["望京", "朝阳"],
        "stale": ["住在海淀", "住海淀", "住在五道口", "五道口附近", "居住在海淀"],
    },
    {
        "name": "上海回长沙",
        "lang": "zh",
        "kind": "move",
        "before": ["一个人在上海租房，住徐汇那边，房租占了工资一半"],
        "after": ["最后还是决定回长沙了，爸妈年纪大了，离家近点放心"],
        "query": "用户住在哪里？",
        "new": ["长沙", "湖南"],
        "stale": ["住在徐汇", "住徐汇", "住在上海", "在上海租房", "居住在上海"],
    },
    {
        "name": "深圳外派新加坡",
        "lang": "zh",
        "kind": "move",
        "before": ["人在深圳，南山科技园这边上班"],
        "after": ["外派新加坡两年，这边物价是真高，一碗叻沙十几新币"],
        "query": "用户住在哪里？",
        "new": ["新加坡"],
        "stale": ["住在深圳", "人在深圳", "住在南山", "居住在深圳", "在深圳生活"],
    },
    {
        "name": "字节到腾讯",
        "lang": "zh",
        "kind": "job",
        "before": ["在字节做产品经理，一天八个会"],
        "after": ["offer拿到了，下周一去腾讯报到，还是做产品，就是换个地方开会哈哈"],
        "query": "用户在哪家公司工作？",
        "new": ["腾讯"],
        "stale": ["在字节做产品", "就职于字节", "字节跳动产品经理", "在字节跳动工作", "字节的产品经理", "在字节工作"],
    },
    {
        "name": "语文老师上岸",
        "lang": "zh",
        "kind": "job",
        "before": ["我是初中语文老师，今年带初三，压力山大"],
        "after": ["上岸了！！区税务局，下个月入职，终于不用改作文了😭"],
        "query": "用户的职业是什么？",
        "new": ["税务局", "公务员", "考公上岸"],
        "stale": ["是初中语文老师", "是一名初中语文老师", "担任初中语文老师", "今年带初三", "职业是初中语文老师"],
    },
    {
        "name": "会计开奶茶店",
        "lang": "zh",
        "kind": "job",
        "before": ["在一家外企做会计，月底结账忙到飞起"],
        "after": ["辞了，跟朋友在大学城合伙开了家奶茶店，累是累但挺开心"],
        "query": "用户做什么工作？",
        "new": ["奶茶店", "开店", "奶茶"],
        "stale": ["在外企做会计", "是会计", "外企会计", "从事会计工作", "职业是会计"],
    },
    {
        "name": "换手机号",
        "lang": "zh",
        "kind": "value",
        "before": ["我手机号是13800138000，快递填这个就行"],
        "after": ["换号了，以后都用15912345678，原来那个已经停机了"],
        "query": "用户的手机号是多少？",
        "new": ["15912345678", "159 1234 5678", "159-1234-5678"],
        "stale": [
            "手机号是13800138000",
            "手机号为13800138000",
            "手机号码是13800138000",
            "号码是13800138000",
            "手机号：13800138000",
        ],
    },
    {
        "name": "体重减到68",
        "lang": "zh",
        "kind": "value",
        "before": ["现在72公斤，目标是减到65"],
        "after": ["称了一下68了！还差三公斤，冲"],
        "query": "用户现在的体重是多少？",
        "new": ["68"],
        "stale": ["体重72", "体重是72", "体重为72", "现在72公斤", "目前72公斤"],
    },
    {
        "name": "瑜伽课改时间",
        "lang": "zh",
        "kind": "value",
        "before": ["每周三晚上七点上瑜伽课，那个时间别给我安排别的"],
        "after": ["瑜伽馆调课了，挪到周四晚上八点，周三空出来了"],
        "query": "用户的瑜伽课是什么时间？",
        "new": ["周四", "星期四", "礼拜四"],
        "stale": ["周三晚上七点", "周三晚上7点", "星期三晚上七点", "周三19", "每周三晚上"],
    },
    {
        "name": "婚期改到五一",
        "lang": "zh",
        "kind": "value",
        "before": ["婚礼定在今年10月1号了，国庆假期大家都有空"],
        "after": ["婚期往后挪了，酒店那边档期冲突，改成明年五一"],
        "query": "用户的婚礼是什么时候？",
        "new": ["五一", "5月1", "五月一", "劳动节", "5.1"],
        "stale": ["定在今年10月1", "定在10月1", "10月1号举行", "国庆假期举行", "婚礼在10月1"],
    },
    {
        "name": "青霉素过敏复述",
        "lang": "zh",
        "kind": "restated",
        "before": ["我对青霉素过敏，小时候打针差点出事"],
        "after": ["下次看病帮我记着提醒医生，青霉素类的药我碰不了"],
        "query": "用户对什么药物过敏？",
        "new": ["青霉素"],
        "stale": [],
    },
    {
        "name": "猫叫土豆复述",
        "lang": "zh",
        "kind": "restated",
        "before": ["我家猫叫土豆，是只英短蓝猫"],
        "after": ["土豆今天又把杯子推下桌了，英短都这么皮吗"],
        "query": "用户的猫叫什么名字？",
        "new": ["土豆"],
        "stale": [],
    },
    {
        "name": "不吃香菜复述",
        "lang": "zh",
        "kind": "restated",
        "before": ["我不吃香菜，一点都不行"],
        "after": ["点外卖帮我备注去香菜哈，闻到那个味儿就想吐"],
        "query": "用户有什么忌口？",
        "new": ["香菜"],
        "stale": [],
    },
    {
        "name": "金毛送回老家",
        "lang": "zh",
        "kind": "contradiction",
        "before": ["家里养了条金毛，叫可乐，三岁了"],
        "after": ["可乐送回老家给爸妈养了，城里实在没空遛它，爸妈那院子大它也开心"],
        "query": "用户现在养狗吗？",
        "new": ["送回老家", "送给", "不养", "没有养", "爸妈养", "父母", "送人"],
        "stale": ["养了条金毛", "养了一条金毛", "家里养了", "家里有一条金毛", "家里有条金毛"],
    },
    {
        "name": "健身卡没续",
        "lang": "zh",
        "kind": "contradiction",
        "before": ["每周去三次健身房，主要练力量"],
        "after": ["健身卡到期没续，这俩月基本没练，躺平了"],
        "query": "用户还去健身房吗？",
        "new": ["没续", "不再", "停止", "没去", "不去", "没练", "停了", "躺平"],
        "stale": ["每周去三次健身房", "每周去健身房三次", "每周健身三次", "一周三次健身"],
    },
    {
        "name": "日语不学了",
        "lang": "zh",
        "kind": "contradiction",
        "before": ["最近在学日语，每天背五十个单词，准备明年考N2"],
        "after": ["日语先放下了，工作太忙实在坚持不下来，N2也不报了"],
        "query": "用户在学日语吗？",
        "new": ["放下", "放弃", "不学", "停止", "没再学", "不再", "不报"],
        "stale": ["在学日语", "正在学习日语", "每天背五十个单词", "准备明年考n2", "正在学日语"],
    },
    # --- a seventh probe: 40 scenarios by a fifth helper that read nothing of the repository, written
    # after the session of 2026-12-08 had made its changes, and never tuned on: 10/40 on the code before
    # that session, 11/40 on its code. What to expect on unseen phrasing.
    {
        "name": "p7 latte to matcha",
        "lang": "en",
        "kind": "preference",
        "before": ["I'm basically running on oat milk lattes, like 3 a day lol"],
        "after": ["update: quit coffee cold turkey last week, it was wrecking my sleep", "matcha is my thing now 🍵"],
        "query": "What is the user's usual daily drink?",
        "new": ["matcha"],
        "stale": [
            "user drinks oat milk lattes",
            "user drinks about 3",
            "user drinks around 3",
            "user drinks three",
            "user drinks 3 oat",
            "user drinks 3 lattes",
        ],
    },
    {
        "name": "p7 notion to obsidian",
        "lang": "en",
        "kind": "preference",
        "before": ["I keep all my notes in Notion, work and personal stuff both"],
        "after": ["ok so I finally ditched notion, way too slow on my phone. everything lives in obsidian these days"],
        "query": "What app does the user use for notes?",
        "new": ["obsidian"],
        "stale": [
            "user uses notion",
            "user keeps all notes in notion",
            "user keeps notes in notion",
            "user keeps all their notes in notion",
            "user keeps all of their notes in notion",
        ],
    },
    {
        "name": "p7 running to swimming",
        "lang": "en",
        "kind": "preference",
        "before": ["I run every morning before work, usually a 5k loop around the park"],
        "after": [
            "knee's been acting up so the morning runs are on pause indefinitely",
            "hitting the pool at 6:30 most days instead, laps are weirdly relaxing",
        ],
        "query": "What is the user's morning exercise routine?",
        "new": ["swim", "pool", "laps"],
        "stale": [
            "user runs every morning",
            "user runs a 5k every morning",
            "user goes running every morning",
            "user runs 5k every morning",
        ],
    },
    {
        "name": "p7 vscode to neovim",
        "lang": "en",
        "kind": "preference",
        "before": ["I do all my coding in VS Code, got it set up just how I like"],
        "after": ["been on neovim for like two months and honestly can't go back 😅 took forever to configure tho"],
        "query": "What editor does the user code in?",
        "new": ["neovim", "nvim"],
        "stale": [
            "user codes in vs code",
            "user codes in vscode",
            "user uses vs code",
            "user uses vscode",
            "user does all coding in vs code",
            "user does all their coding in vs code",
        ],
    },
    {
        "name": "p7 austin to denver",
        "lang": "en",
        "kind": "move",
        "before": ["I live in Austin, been here about 4 years."],
        "after": ["I moved to Denver."],
        "query": "Where does the user live?",
        "new": ["denver"],
        "stale": [
            "user lives in austin",
            "user is based in austin",
            "user currently lives in austin",
            "user has lived in austin",
        ],
    },
    {
        "name": "p7 brooklyn to jersey city",
        "lang": "en",
        "kind": "move",
        "before": ["my apartment in Brooklyn is tiny but I love the neighborhood too much to leave"],
        "after": ["finally signed the lease on a place in Jersey City!! more space, slightly longer commute, worth it"],
        "query": "Where does the user live?",
        "new": ["jersey city"],
        "stale": [
            "user lives in brooklyn",
            "user's apartment is in brooklyn",
            "user has an apartment in brooklyn",
            "user has a tiny apartment in brooklyn",
        ],
    },
    {
        "name": "p7 manchester to lisbon",
        "lang": "en",
        "kind": "move",
        "before": ["I'm in Manchester so the weather is always grey here haha"],
        "after": ["first week living in Lisbon done, got the keys to my flat on monday ☀️ still figuring out the trams"],
        "query": "What city does the user live in?",
        "new": ["lisbon", "lisboa"],
        "stale": ["user lives in manchester", "user is in manchester", "user is based in manchester"],
    },
    {
        "name": "p7 nurse to clinical educator",
        "lang": "en",
        "kind": "job",
        "before": ["I'm a nurse at St. Mary's, mostly night shifts which is rough"],
        "after": [
            "just wrapped my first week as a clinical educator at Kaiser. sleeping at night like a normal human again!"
        ],
        "query": "Where does the user work and in what role?",
        "new": ["kaiser", "clinical educator"],
        "stale": [
            "user works at st. mary",
            "user is a nurse at st. mary",
            "user works at st mary",
            "user is a nurse at st mary",
            "user works night shifts",
        ],
    },
    {
        "name": "p7 google to stripe",
        "lang": "en",
        "kind": "job",
        "before": ["I work at Google as a product manager."],
        "after": ["I left Google. I'm at Stripe now, same PM role."],
        "query": "Who is the user's employer?",
        "new": ["stripe"],
        "stale": ["user works at google", "user is a product manager at google", "user is a pm at google"],
    },
    {
        "name": "p7 junior to senior analyst",
        "lang": "en",
        "kind": "job",
        "before": ["I'm a junior data analyst on the marketing team"],
        "after": ["got promoted!! senior analyst as of monday 🎉 same team tho"],
        "query": "What is the user's job title?",
        "new": ["senior"],
        "stale": ["user is a junior data analyst", "user works as a junior data analyst", "user's title is junior"],
    },
    {
        "name": "p7 locker code",
        "lang": "en",
        "kind": "value",
        "before": ["my locker code at the gym is 4471, remind me if I forget lol"],
        "after": ["they reset all the lockers over the weekend, mine's 8823 now"],
        "query": "What is the user's gym locker code?",
        "new": ["8823"],
        "stale": ["code is 4471", "code: 4471", "code is '4471'"],
    },
    {
        "name": "p7 dentist moved",
        "lang": "en",
        "kind": "value",
        "before": ["dentist appointment is on March 14 at 3pm, don't let me forget"],
        "after": ["dentist office called, they had to push me back a week to the 21st. same time"],
        "query": "When is the user's dentist appointment?",
        "new": ["21", "twenty-first"],
        "stale": [
            "appointment is on march 14",
            "appointment is march 14",
            "appointment on march 14 at 3",
            "scheduled for march 14",
            "appointment is on 14 march",
        ],
    },
    {
        "name": "p7 rent went up",
        "lang": "en",
        "kind": "value",
        "before": ["rent is $1,850 a month which is already brutal"],
        "after": ["landlord renewed the lease but bumped it to 2k 🙃 love that for me"],
        "query": "How much is the user's monthly rent?",
        "new": ["2,000", "2000", "2k", "two thousand"],
        "stale": [
            "rent is $1,850",
            "rent is 1,850",
            "rent is $1850",
            "rent is 1850",
            "pays $1,850",
            "pays 1,850",
            "pays $1850",
        ],
    },
    {
        "name": "p7 new phone number",
        "lang": "en",
        "kind": "value",
        "before": ["my cell is 555-0142 if the form needs it"],
        "after": ["new number btw, the old one got messed up when I switched carriers. it's 555-0198"],
        "query": "What is the user's phone number?",
        "new": ["555-0198", "5550198", "555 0198", "0198"],
        "stale": ["number is 555-0142", "cell is 555-0142", "phone: 555-0142", "number: 555-0142", "phone is 555-0142"],
    },
    {
        "name": "p7 peanut allergy again",
        "lang": "en",
        "kind": "restated",
        "before": ["I'm allergic to peanuts, pretty severe"],
        "after": [
            "just a heads up when you suggest recipes — no peanuts for me, I carry an epipen for exactly that reason"
        ],
        "query": "What food allergies does the user have?",
        "new": ["peanut"],
        "stale": [],
    },
    {
        "name": "p7 vegetarian again",
        "lang": "en",
        "kind": "restated",
        "before": ["I've been vegetarian for about 10 years now"],
        "after": ["fyi for the restaurant recs, I don't eat meat"],
        "query": "What is the user's diet?",
        "new": ["vegetarian", "meat", "veggie"],
        "stale": [],
    },
    {
        "name": "p7 daughter lily again",
        "lang": "en",
        "kind": "restated",
        "before": ["my daughter Lily just turned 6"],
        "after": ["Lily's birthday party was so chaotic, six year olds are A LOT 😂"],
        "query": "What is the name of the user's daughter?",
        "new": ["lily"],
        "stale": [],
    },
    {
        "name": "p7 cancelled gym",
        "lang": "en",
        "kind": "contradiction",
        "before": ["I have a membership at Planet Fitness, I go like 3x a week"],
        "after": ["cancelled my planet fitness membership today, I just wasn't going anymore tbh"],
        "query": "Does the user have a gym membership?",
        "new": ["cancel", "no longer", "ended", "quit", "stopped", "not a member"],
        "stale": [
            "user has a membership at planet fitness",
            "user has a planet fitness membership",
            "user is a member of planet fitness",
            "user is a planet fitness member",
        ],
    },
    {
        "name": "p7 quit smoking",
        "lang": "en",
        "kind": "contradiction",
        "before": ["yeah I smoke, about half a pack a day, trying to cut down"],
        "after": ["day 30 without a cigarette!! 💪 cravings are finally easing up"],
        "query": "Does the user smoke?",
        "new": [
            "quit",
            "stopped",
            "no longer",
            "smoke-free",
            "30 days",
            "day 30",
            "doesn't smoke",
            "does not smoke",
            "non-smoker",
            "without a cigarette",
        ],
        "stale": ["user smokes", "user is a smoker", "user currently smokes"],
    },
    {
        "name": "p7 sold the civic",
        "lang": "en",
        "kind": "contradiction",
        "before": ["I drive a 2015 Honda Civic, it's got like 140k miles on it"],
        "after": ["sold the civic last weekend! gonna try just biking + transit for a while and see how it goes"],
        "query": "What car does the user drive?",
        "new": [
            "sold",
            "no longer",
            "doesn't have a car",
            "does not have a car",
            "without a car",
            "car-free",
            "no car",
        ],
        "stale": [
            "user drives a 2015 honda civic",
            "user drives a honda civic",
            "user drives a civic",
            "user has a honda civic",
            "user owns a 2015",
            "user owns a honda civic",
        ],
    },
    {
        "name": "p7 小米换iphone",
        "lang": "zh",
        "kind": "preference",
        "before": ["我一直用的安卓，现在手里是小米13"],
        "after": ["入了个iPhone 15，生态是真香，就是手势还不太习惯😂"],
        "query": "用户用的是什么手机？",
        "new": ["iphone", "苹果"],
        "stale": ["用户用的是小米", "用户使用小米", "用户用小米13", "用户的手机是小米", "user uses a xiaomi"],
    },
    {
        "name": "p7 网易云换qq音乐",
        "lang": "zh",
        "kind": "preference",
        "before": ["平时听歌都用网易云"],
        "after": ["网易云好多歌都下架了，干脆转QQ音乐了，会员也开上了"],
        "query": "用户用什么软件听歌？",
        "new": ["qq音乐", "qq music"],
        "stale": ["用户用网易云", "用户使用网易云", "用户平时用网易云", "user uses netease"],
    },
    {
        "name": "p7 夜跑改骑车",
        "lang": "zh",
        "kind": "preference",
        "before": ["每天晚上下班去夜跑，基本5公里"],
        "after": ["跑步膝盖受不了了，最近改骑车通勤，一天来回二十公里左右，也算锻炼了"],
        "query": "用户平时做什么运动？",
        "new": ["骑车", "骑行", "自行车", "单车", "cycl", "bik"],
        "stale": [
            "用户每天晚上夜跑",
            "用户每天夜跑",
            "用户每晚夜跑",
            "用户每天晚上跑",
            "user runs every night",
            "user goes running every night",
        ],
    },
    {
        "name": "p7 杭州搬成都",
        "lang": "zh",
        "kind": "move",
        "before": ["我住在杭州"],
        "after": ["我搬到成都了"],
        "query": "用户住在哪里？",
        "new": ["成都", "chengdu"],
        "stale": ["用户住在杭州", "用户居住在杭州", "user lives in hangzhou"],
    },
    {
        "name": "p7 望京搬通州",
        "lang": "zh",
        "kind": "move",
        "before": ["在北京望京租的房，离公司挺近的"],
        "after": ["房东要卖房，没办法，刚搬去通州了，通勤多了半小时😭"],
        "query": "用户住在北京哪个区域？",
        "new": ["通州", "tongzhou"],
        "stale": [
            "用户在望京租房",
            "用户住在望京",
            "用户在北京望京租",
            "user lives in wangjing",
            "user rents in wangjing",
        ],
    },
    {
        "name": "p7 深圳回长沙",
        "lang": "zh",
        "kind": "move",
        "before": ["我在深圳住了五年了，最近天天下雨烦死了"],
        "after": ["回老家长沙定居了，房子也买好了，以后不折腾了"],
        "query": "用户现在住在哪个城市？",
        "new": ["长沙", "changsha"],
        "stale": ["用户住在深圳", "用户在深圳住", "用户居住在深圳", "user lives in shenzhen"],
    },
    {
        "name": "p7 南京落户苏州",
        "lang": "zh",
        "kind": "move",
        "before": ["我家在南京鼓楼区，离地铁站走路五分钟"],
        "after": ["苏州落户的手续总算办完了，孩子也转到这边上学了，松了口气"],
        "query": "用户家在哪里？",
        "new": ["苏州", "suzhou"],
        "stale": ["用户住在南京", "用户家在南京", "用户居住在南京", "user lives in nanjing"],
    },
    {
        "name": "p7 腾讯换阿里",
        "lang": "zh",
        "kind": "job",
        "before": ["我在腾讯上班"],
        "after": ["我换到阿里了"],
        "query": "用户在哪家公司工作？",
        "new": ["阿里", "alibaba"],
        "stale": ["用户在腾讯上班", "用户在腾讯工作", "用户就职于腾讯", "user works at tencent"],
    },
    {
        "name": "p7 文案转游戏策划",
        "lang": "zh",
        "kind": "job",
        "before": ["目前在一家4A公司做文案，天天改稿改到吐"],
        "after": ["转行了！在一家游戏公司做策划，加班还是多但开心多了"],
        "query": "用户是做什么工作的？",
        "new": ["策划", "游戏公司", "game design", "游戏"],
        "stale": [
            "用户是文案",
            "用户做文案",
            "用户在4a公司",
            "用户在一家4a公司",
            "user is a copywriter",
            "user works as a copywriter",
        ],
    },
    {
        "name": "p7 老师辞职开工作室",
        "lang": "zh",
        "kind": "job",
        "before": ["我是初中数学老师，带两个班"],
        "after": ["辞职了，出来自己开了个线上辅导工作室，时间自由多了，收入也还行"],
        "query": "用户的职业是什么？",
        "new": ["工作室", "辅导", "创业", "tutoring"],
        "stale": [
            "用户是初中数学老师",
            "用户是一名初中数学老师",
            "用户是一位初中数学老师",
            "user is a middle school math teacher",
        ],
    },
    {
        "name": "p7 滴滴到字节",
        "lang": "zh",
        "kind": "job",
        "before": ["在滴滴做后端开发，最近需求巨多"],
        "after": ["入职字节第一周，飞书用得还挺顺手的，就是新人培训有点多"],
        "query": "用户在哪家公司上班？",
        "new": ["字节", "bytedance"],
        "stale": ["用户在滴滴", "用户就职于滴滴", "user works at didi"],
    },
    {
        "name": "p7 wifi密码改了",
        "lang": "zh",
        "kind": "value",
        "before": ["家里wifi密码是 qwer1234，帮我记一下"],
        "after": ["wifi密码我改了，现在是 Lemon@2024"],
        "query": "用户家的wifi密码是什么？",
        "new": ["lemon@2024"],
        "stale": ["密码是qwer1234", "密码是 qwer1234", "密码：qwer1234", "密码为qwer1234", "password is qwer1234"],
    },
    {
        "name": "p7 体检改期",
        "lang": "zh",
        "kind": "value",
        "before": ["体检约在4月18号上午"],
        "after": ["医院那边说那天排满了，给我挪到下周三了，还是上午空腹去"],
        "query": "用户的体检安排在什么时候？",
        "new": ["下周三", "周三", "星期三", "wednesday"],
        "stale": [
            "用户体检约在4月18",
            "用户的体检在4月18",
            "用户体检在4月18",
            "体检时间是4月18",
            "checkup is on april 18",
        ],
    },
    {
        "name": "p7 月供降了",
        "lang": "zh",
        "kind": "value",
        "before": ["房贷每个月还6800，压力山大"],
        "after": ["提前还了一部分，月供降到五千二了，终于能喘口气"],
        "query": "用户每月房贷还多少？",
        "new": ["5200", "五千二", "5,200", "5千2", "5.2k"],
        "stale": [
            "月供是6800",
            "月供为6800",
            "用户每月还6800",
            "用户每个月还6800",
            "monthly payment is 6800",
            "payment is 6,800",
        ],
    },
    {
        "name": "p7 乳糖不耐再提",
        "lang": "zh",
        "kind": "restated",
        "before": ["我乳糖不耐受，喝牛奶就闹肚子"],
        "after": ["别给我推荐奶昔啥的哈，一喝奶就拉肚子🤣"],
        "query": "用户有什么饮食禁忌？",
        "new": ["乳糖", "牛奶", "喝奶", "lactose"],
        "stale": [],
    },
    {
        "name": "p7 猫叫年糕再提",
        "lang": "zh",
        "kind": "restated",
        "before": ["我家猫叫年糕，是只橘猫，贼能吃"],
        "after": ["年糕今天又把我外卖偷吃了，这胖橘没救了"],
        "query": "用户的猫叫什么名字？",
        "new": ["年糕", "niangao"],
        "stale": [],
    },
    {
        "name": "p7 生日再提",
        "lang": "zh",
        "kind": "restated",
        "before": ["我生日是11月3号"],
        "after": ["我是十一月三日生的，天蝎座哈哈"],
        "query": "用户的生日是哪天？",
        "new": ["11月3", "十一月三", "november 3", "11-03", "11/3", "nov 3"],
        "stale": [],
    },
    {
        "name": "p7 柯基送爸妈",
        "lang": "zh",
        "kind": "contradiction",
        "before": ["我养了一只柯基，叫豆豆"],
        "after": ["豆豆送到我爸妈乡下了，工作太忙实在照顾不过来，以后就他们养了"],
        "query": "用户养宠物吗？",
        "new": ["送", "不再", "不养", "已经不", "no longer", "gave"],
        "stale": ["用户养了一只柯基", "用户有一只柯基", "用户养着一只柯基", "user has a corgi", "user owns a corgi"],
    },
    {
        "name": "p7 健身卡没续",
        "lang": "zh",
        "kind": "contradiction",
        "before": ["每周都要去健身房撸铁三四次"],
        "after": ["健身卡到期没续，最近真的一点都不想动😮‍💨"],
        "query": "用户还去健身房吗？",
        "new": ["没续", "不再", "停了", "到期", "不去", "no longer", "stopped", "expired"],
        "stale": ["用户每周去健身房", "用户每周都去健身房", "用户每周都要去健身房", "user goes to the gym"],
    },
    {
        "name": "p7 日语班退了",
        "lang": "zh",
        "kind": "contradiction",
        "before": ["报了个周末的日语班，每周六下午上课"],
        "after": ["日语班退了，换老师之后讲得太水，学费退了一半"],
        "query": "用户在上什么课吗？",
        "new": ["退了", "退课", "不再", "不上", "no longer", "dropped", "quit"],
        "stale": [
            "用户每周六下午上日语",
            "用户报了日语班",
            "用户在上日语班",
            "user takes japanese",
            "user is taking japanese",
        ],
    },
]


# Probe scenarios the service still fails, and why: each needs a reading the offline extractor
# does not have without guessing. A value without a verb it knows ("I'm with Monzo now", "I'm in
# spot B4-03 now", "瘦到76公斤", "推迟到1月25号"); a statement without a subject ("Python is history
# for my hobby stuff", "现在基本只听古典音乐", "现在改成在厦门定居了", "那缸热带鱼我已经送人了"); a new
# home named only in passing ("writing from my new apartment in Minneapolis"); a restatement whose
# words differ from the first (a date written two ways, "每周三" / "周三"); a habit ("could eat it
# every day") whose object is only a pronoun. The tests expect exactly these to fail, so a fix or a
# new miss shows.
KNOWN_MISSES = frozenset(
    {
        "anniversary date said twice",
        "austin is history, now minneapolis",
        "changed my bank",
        "off sushi after food poisoning",
        "office parking spot reassigned",
        "side projects python to rust",
        "体重降到76公斤",
        "周三晚上日语课说了两次",
        "周杰伦换成古典音乐",
        "年会改期到1月25号",
        "热带鱼送人了不养宠物",
        # The fourth probe: 20 of its 30. Mostly the new state is not kept at all, said as people say it
        # (a move, a job, a value, a habit without a verb or a subject the rules know: "the last boxes are
        # unpacked in Halifax", "阿里那边办完离职了，下周一去小米报到").
        "barista to electrician apprentice",
        "notion notes moved to obsidian",
        "portland to halifax",
        "rent dropped on lease renewal",
        "steak well done to medium-rare",
        "studio alarm code rotated",
        "window seat to aisle seat",
        "信用卡还款日改到3号",
        "儿子重新分班到五班",
        "单身到脱单",
        "天津外派新加坡",
        "女儿朵朵说了两次",
        "王者荣耀卸了改玩塞尔达",
        "电动车被偷了没再买",
        "钢琴课停了",
        "银行柜员辞职开烘焙店",
        "阿里离职去小米报到",
        "降压药加到一天两片",
        # The fifth probe: 21 of its 30, the same kinds, and traits said in passing ("Being six foot four, …").
        "beach holidays to mountain hiking",
        "book club fizzled out",
        "brooklyn walk-up to farmhouse near asheville",
        "deaf in left ear said twice",
        "dentist appointment moved to the 16th",
        "excel记账改用随手记",
        "moleskine planner to todoist",
        "six foot four said twice",
        "uber driver to county library",
        "出租车司机考上税务局",
        "周末宅家变露营",
        "哈尔滨到三亚安家",
        "失眠好了褪黑素停了",
        "幼儿园放学时间改到5点",
        "晕车说了两次",
        "步数目标调到一万二",
        "福州仓山退租去宁波",
        "老公是消防员说了两次",
        "雅思重考7.5",
        # The sixth probe: 30 of its 40, mostly a state the sentence rules do not read at all, old or new
        # ("我在杭州，最近梅雨季天天下雨", "went full neovim", "first week at Stripe done").
        "editor vscode to neovim",
        "music spotify to apple",
        "workout morning to night",
        "notes notion to obsidian",
        "austin to denver",
        "clapham to manchester",
        "shopify to stripe",
        "teacher to assistant principal",
        "auditor to bakery owner",
        "door code",
        "dentist date moved",
        "rent went up",
        "quit smoking, three months in",
        "book club ended",
        "iphone换华为",
        "开车改地铁",
        "杭州到成都",
        "上海回长沙",
        "深圳外派新加坡",
        "语文老师上岸",
        "会计开奶茶店",
        "换手机号",
        "体重减到68",
        "瑜伽课改时间",
        "婚期改到五一",
        "金毛送回老家",
        "健身卡没续",
        "日语不学了",
        # Passed only while neither statement was kept: once "我对青霉素过敏，小时候打针差点出事" was read
        # (its first clause alone), the restatement "青霉素类的药我碰不了" is kept beside it as a rule.
        "青霉素过敏复述",
        # The seventh probe: 29 of its 40; in 27 the new state is not kept at all.
        "p7 latte to matcha",
        "p7 notion to obsidian",
        "p7 running to swimming",
        "p7 vscode to neovim",
        "p7 brooklyn to jersey city",
        "p7 manchester to lisbon",
        "p7 nurse to clinical educator",
        "p7 junior to senior analyst",
        "p7 locker code",
        "p7 dentist moved",
        "p7 rent went up",
        "p7 new phone number",
        "p7 quit smoking",
        "p7 小米换iphone",
        "p7 网易云换qq音乐",
        "p7 夜跑改骑车",
        "p7 望京搬通州",
        "p7 深圳回长沙",
        "p7 腾讯换阿里",
        "p7 文案转游戏策划",
        "p7 老师辞职开工作室",
        "p7 滴滴到字节",
        "p7 wifi密码改了",
        "p7 体检改期",
        "p7 月供降了",
        "p7 乳糖不耐再提",
        "p7 柯基送爸妈",
        "p7 健身卡没续",
        "p7 日语班退了",
    }
)


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


SCENARIO_FIELDS = {"name": str, "lang": str, "kind": str, "before": list, "after": list, "query": str, "new": list}
KINDS = {"preference", "move", "job", "value", "restated", "contradiction"}


def scenarios_load(path: Path) -> list[dict]:
    """Scenarios from a JSON file, checked field by field (ValueError names the first bad one)."""
    loaded = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(loaded, list) or not loaded:
        raise ValueError("expected a non-empty JSON list of scenarios")
    for index, scenario in enumerate(loaded):
        if not isinstance(scenario, dict):
            raise ValueError(f"entry {index} is not an object")
        for field_name, kind in SCENARIO_FIELDS.items():
            if not isinstance(scenario.get(field_name), kind):
                raise ValueError(f"entry {index}: {field_name!r} must be a {kind.__name__}")
        if scenario["lang"] not in ("en", "zh") or scenario["kind"] not in KINDS:
            raise ValueError(f"entry {index}: lang must be en or zh and kind one of {sorted(KINDS)}")
        scenario.setdefault("stale", [])
    names = [s["name"] for s in loaded]
    if len(set(names)) != len(names):
        raise ValueError("scenario names must be unique")
    return loaded


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base-url", help="A running service (then --api-key is required).")
    parser.add_argument("--api-key")
    parser.add_argument("--database", default=DEFAULT_DATABASE, help="Database for the server this script starts.")
    parser.add_argument("--only", help="Run the scenarios whose name contains this text.")
    parser.add_argument(
        "--scenarios",
        type=Path,
        help="A JSON file with a list of scenarios of your own (the fields of SCENARIOS' entries) to run instead.",
    )
    args = parser.parse_args()
    if args.base_url and not args.api_key:
        parser.error("--base-url needs --api-key")
    server = None
    if args.base_url:
        base_url, key = args.base_url, args.api_key
    else:
        server, base_url, key = start_server(args.database)
    try:
        chosen = scenarios_load(args.scenarios) if args.scenarios else SCENARIOS
    except (OSError, ValueError) as error:
        parser.error(f"--scenarios: {error}")
    scenarios = [s for s in chosen if not args.only or args.only.casefold() in s["name"].casefold()]
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
