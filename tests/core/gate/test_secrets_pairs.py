"""A credential whose name and value are two fields of one entry: environment variables in
Kubernetes and ECS, CloudFormation parameters, .NET app settings, Terraform blocks.

The scanner judges the value as if it were assigned to the name (``DB_PASSWORD = ...``), by
the same rules: the name must be credential-like and not hold something else (an id, a URL),
and the value must read as a credential. Every value here is made up for the test.
"""

from __future__ import annotations

import pytest

from contextfs.gate.secrets import scan
from contextfs.gate.secrets_assigned import assigned_values

VALUE = "x8Fq2pLm9ZtR4vYwK3s7"
ASSIGNED = "password or secret assignment"

FOUND = {
    "kubernetes env": f"```yaml\nenv:\n  - name: BILLING_API_TOKEN\n    value: {VALUE}\n```\n",
    "kubernetes env, quoted": f'```yaml\nenv:\n  - name: "DB_PASSWORD"\n    value: "{VALUE}"\n```\n',
    "kubernetes env, flow style": f"env: [{{name: DB_PASSWORD, value: {VALUE}}}]\n",
    "ecs task definition": (
        f'{{"environment": [{{"name": "LOG_LEVEL", "value": "info"}}, '
        f'{{"name": "STRIPE_SECRET", "value": "{VALUE}"}}]}}'
    ),
    "cloudformation parameter": (
        f'[{{"ParameterKey": "DbPassword", "ParameterValue": "{VALUE}"}}]'
    ),
    ".net app settings": f'<appSettings>\n  <add key="StripeSecretKey" value="{VALUE}" />\n</appSettings>\n',
    "terraform env block": f'env {{\n  name  = "GITHUB_TOKEN"\n  value = "{VALUE}"\n}}\n',
    "a 40-hex token": ("- name: SONAR_TOKEN\n  value: 3f9a1c2b4d5e6f708192a3b4c5d6e7f8091a2b3c\n"),
}

PASSED = {
    # the name holds no credential, or something beside one
    "not a credential name": f"- name: LOG_FORMAT\n  value: {VALUE}\n",
    "an id": f'<add key="ApiKeyId" value="{VALUE}" />\n',
    "a url": "- name: TOKEN_URL\n  value: https://login.example.org/oauth/token\n",
    # the value is no credential
    "a reference": "- name: DB_PASSWORD\n  value: ${DB_PASSWORD}\n",
    "a word": "- name: DB_PASSWORD\n  value: correcthorsebattery\n",
    "a placeholder": "- name: API_TOKEN\n  value: <your-token>\n",
    # the value belongs to another entry
    "the next entry's value": (
        "- name: API_TOKEN\n  valueFrom:\n    secretKeyRef: {name: api, key: token}\n"
        f"- name: LOG_FORMAT\n  value: {VALUE}\n"
    ),
    "a value field and no name field": f'{{"X-Host": "api.example.org", "X-Value": "{VALUE}"}}',
    "too far from its name": "- name: API_TOKEN\n" + "  # note\n" * 30 + f"  value: {VALUE}\n",
}


@pytest.mark.parametrize("text", FOUND.values(), ids=FOUND.keys())
def test_a_value_paired_with_a_credential_name_is_found(text: str) -> None:
    found = scan(text, path="notes/deploy.md")
    assert [f.kind for f in found] == [ASSIGNED], found
    lines = text.split("\n")
    assert any(secret in lines[found[0].line - 1] for secret in (VALUE, "3f9a1c2b")), found


@pytest.mark.parametrize("text", PASSED.values(), ids=PASSED.keys())
def test_pairs_that_hold_no_credential_pass(text: str) -> None:
    assert scan(text, path="notes/deploy.md") == []


def test_the_value_is_reported_at_its_own_offset() -> None:
    text = f"- name: API_TOKEN\n  value: {VALUE}\n"
    assert list(assigned_values(text)) == [(text.index(VALUE), VALUE)]


def test_many_name_fields_cost_one_pass() -> None:
    """A long list of entries is read in one pass over its name and value fields: every
    credential among 5,000 entries is found, and no other."""
    entries = [
        f"- name: {'API_TOKEN' if i % 1000 == 0 else f'SETTING_{i}'}\n  value: {VALUE[:-4]}{i:04d}\n"
        for i in range(5000)
    ]
    found = scan("".join(entries), path="notes/deploy.md")
    assert [f.line for f in found] == [2 + 2 * i for i in range(0, 5000, 1000)]


UUID = "3b2f6c1e-9a4d-4f7b-8c2e-5d1a0b9e7f64"


def _values(text: str) -> list[str]:
    return [value for _, value in assigned_values(text)]


def test_the_name_judges_the_value_as_an_assignment_would() -> None:
    # A UUID is a credential under a token's name (Heroku, Postmark) and not under others.
    assert _values(f"- name: POSTMARK_API_TOKEN\n  value: {UUID}\n") == [UUID]
    assert _values(f"- name: TENANT_ID_TOKENLESS\n  value: {UUID}\n") == []


def test_an_entry_without_a_close_value_does_not_end_the_search() -> None:
    text = (
        "- name: API_TOKEN\n  valueFrom: {secretKeyRef: {name: api, key: token}}\n"
        f"- name: DB_PASSWORD\n  value: {VALUE}\n"
    )
    assert _values(text) == [VALUE]


def test_the_value_field_may_follow_its_name_by_the_reach_and_no_further() -> None:
    # the reach runs from the end of the name to the start of the value field's word
    for gap, found in ((160, [VALUE]), (161, [])):
        between = '", "note": "' + "x" * (gap - len('", "note": "') - len('", "')) + '", "'
        text = f'{{"name": "API_TOKEN{between}value": "{VALUE}"}}'
        assert text.index("value") - text.index("API_TOKEN") - len("API_TOKEN") == gap
        assert _values(text) == found, gap


@pytest.mark.parametrize(
    "field", ["XParameterValue", "DefaultValue", "oldvalue", "ParametersValue"]
)
def test_a_field_that_only_ends_in_value_is_not_the_value_field(field: str) -> None:
    assert _values(f'{{"ParameterKey": "DbPassword", "{field}": "{VALUE}"}}') == []


def test_a_value_field_glued_to_a_word_by_an_underscore_is_another_field() -> None:
    assert _values(f"- name: API_TOKEN\n  default_value: {VALUE}\n") == []


def test_a_quoted_value_keeps_its_last_character_and_a_bare_one_drops_a_full_stop() -> None:
    assert _values('password = "Xk9f2Lm8Qz7W!p."') == ["Xk9f2Lm8Qz7W!p."]
    assert _values("password: Xk9f2Lm8Qz7W!p.") == ["Xk9f2Lm8Qz7W!p"]


def test_a_uuid_is_judged_under_the_name_it_is_given() -> None:
    # a UUID is a credential under a token, secret or auth name: Heroku's and Postmark's keys
    assert _values(f"api_token = {UUID}") == [UUID]
    assert _values(f"Authorization: Bearer {UUID}") == [UUID]
    assert _values(f"session_id = {UUID}") == []
