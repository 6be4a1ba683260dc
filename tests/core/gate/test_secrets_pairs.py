"""A credential whose name and value are two fields of one entry: environment variables in
Kubernetes and ECS, CloudFormation parameters, .NET app settings, Terraform blocks.

The scanner judges the value as if it were assigned to the name (``DB_PASSWORD = ...``), by
the same rules: the name must be credential-like and not hold something else (an id, a URL),
and the value must read as a credential. Every value here is made up for the test.
"""

from __future__ import annotations

import pytest

from contextfs.gate.secrets import scan
from contextfs.gate.secrets_values import assigned_values

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
