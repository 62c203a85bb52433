from web.management.commands.serve import banner_lines


def test_the_banner_sends_people_to_the_dashboard_login_not_the_admin():
    lines = banner_lines(host="127.0.0.1", port=8000, credentials=("pw-1", "mem_key"))
    assert lines == [
        "Agent memory service on http://127.0.0.1:8000/",
        "Dashboard login: demo / pw-1  (http://127.0.0.1:8000/accounts/login/)",
        "Django admin: http://127.0.0.1:8000/admin/",
        "API docs: http://127.0.0.1:8000/api/docs/",
        "Demo API key: mem_key",
        'Try: curl -s -H "Authorization: Token mem_key" http://127.0.0.1:8000/api/v1/memories/',
    ]


def test_without_the_demo_owner_the_banner_is_only_the_address():
    assert banner_lines(host="0.0.0.0", port=9000, credentials=None) == ["Agent memory service on http://0.0.0.0:9000/"]
