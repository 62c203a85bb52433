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
    # Written after a held-out probe (bench/knowledge_updates.py's last group) found them missed.
    ("User works at HSBC as an analyst", "User left HSBC"),
    ("User uses Twitter every day", "User quit Twitter"),
    ("User's phone number is 555-0134", "User changed their phone number, the new one is 555-0199"),
    ("用户在华为上班", "用户从华为离职了"),
    ("用户的家在南京", "用户已经搬去广州住了"),
    ("用户的手机号是13800001111", "用户换了手机号，新号码是13900002222"),
    # Written after a third, independent probe (30 scenarios by a helper that never saw the rules).
    ("User is a nurse at St. Mary's Hospital", "User is done with hospital work"),
    ("User is a big fan of sushi", "User is off sushi now"),
    ("User works at Shopify", "User accepted an offer from Atlassian"),
    ("用户每天早上都会冥想二十分钟", "用户早就不冥想了"),
    ("用户住在学校宿舍", "用户已经毕业离开武汉了，现在回长沙老家住"),
    ("User is a management consultant at Bain", "User left Bain back in April"),
    ("用户的家在南京鼓楼区", "用户已经在合肥安顿下来了"),
    # The same attribute given another value, however far apart the words and the vectors.
    (
        "User's KLM frequent flyer number is KL448120, please keep it handy for bookings",
        "User's frequent flyer number is KL907736",
    ),
    ("User always uses Chrome as their browser, on every machine", "User switched their browser to Firefox"),
    ("User's dentist appointment is on Thursday the 9th at 10am", "User's dentist appointment was moved to the 16th"),
    ("用户的信用卡还款日是每月15号", "用户的信用卡还款日是3号"),
    # A new job: reporting for duty somewhere, or a new place of work with a role of its own.
    ("用户在字节做产品经理", "用户下周一去腾讯报到"),
    ("用户是中学数学老师", "用户现在在猿辅导做课程研发"),
    ("User is a nurse", "User now works at Figma as a product designer"),
]

# (old state, an update whose words need the two statements to be close: a value or a habit changed)
CLOSE_UPDATES = [
    ("User's home address is 12 Oak Street", "User's new home address is 48 Pine Avenue, they just moved"),
    ("用户早餐一般喝牛奶", "用户现在早餐改喝豆浆了"),
    ("用户喜欢看恐怖片", "用户现在更喜欢看纪录片"),
]

# (a memory, a statement that neither replaces nor repeats it)
KEPT = [
    ("User likes Python", "User now likes Rust too"),
    ("User has a dog named Rex", "User has a cat named Tom"),
    ("User visited Paris in 2019", "User visited Rome in 2021"),
    ("User quit their job at the bank", "User loves hiking"),
    ("User drinks green tea", "User moved to Lisbon"),
    ("User owns a small coffee shop in Porto", "User quit coffee"),
    ("User lives in Paris", "User left the party early"),
    ("User likes Tom, his neighbour", "User likes Anna, her colleague"),
    ("User loves coffee", "User is done with the project"),
    ("User lives in Berlin", "User is off work today"),
    ("User's flight is on Monday", "User's flight is at 9am"),
    ("User's friend is Tom", "User's friend is Anna"),
    ("User's wife's birthday is May 3", "User's birthday is June 1"),
    ("User is a nurse", "User joined St. Mary's Hospital"),
    ("用户在腾讯工作", "用户明天带儿子去实验小学报到"),
]
