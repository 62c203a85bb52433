"""Pairs of statements, in English and Chinese, for the merge decision's tests with the real model
(tests/memories/services/test_knowledge_updates.py) and without a database (tests/memories/test_merge.py)."""

# (old state, the update that replaces it)
UPDATES = [
    ("User lives in Berlin", "User moved to Lisbon"),
    ("User lives in Berlin", "User moved from Berlin to Lisbon last month"),
    ("User works at Google", "User joined Stripe as a designer"),
    ("User uses vim as their editor", "User switched from vim to VS Code"),
    ("User eats meat every day", "User no longer eats meat"),
    ("User smokes a pack a day", "User quit smoking"),
    ("用户住在北京", "用户搬到上海了"),
    ("用户喜欢喝咖啡", "用户不再喝咖啡了"),
    ("用户特别喜欢吃辣", "用户现在不吃辣了"),  # 特别 "especially" is not a negation
    ("用户每天抽烟", "用户戒了烟"),
    ("用户用vim写代码", "用户从vim换成了VS Code"),
]

# (a memory, a statement that neither replaces nor repeats it)
KEPT = [
    ("User likes Python", "User now likes Rust too"),
    ("User has a dog named Rex", "User has a cat named Tom"),
    ("User visited Paris in 2019", "User visited Rome in 2021"),
    ("User quit their job at the bank", "User loves hiking"),
    ("User drinks green tea", "User moved to Lisbon"),
    ("User owns a small coffee shop in Porto", "User quit coffee"),
]
