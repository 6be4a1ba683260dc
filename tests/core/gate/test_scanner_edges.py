"""The secret scanner at its edges: exact boundaries, what a refusal shows, and the
judgments of :mod:`contextfs.gate.secrets_values` one by one.

Every value here is made up for the test; none is a real credential.
"""

from __future__ import annotations

import pytest

from contextfs.errors import ConfigError
from contextfs.gate.secrets import SecretPolicy, scan
from contextfs.gate.secrets_values import assigned_values, credential_like

# -- what a refusal of the config shows ----------------------------------------------


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("w" * 22, "'" + "w" * 22 + "'"),  # a repr of 24 characters is shown whole
        ("w" * 23, "'" + "w" * 19 + "...'"),  # one more and it is cut to 20 and an ellipsis
        ("w" * 60, "'" + "w" * 19 + "...'"),
    ],
)
def test_a_refused_config_value_is_shown_clipped(value: str, shown: str) -> None:
    """A secret pasted as a policy or a key name must not be echoed whole: a value's repr
    is shown up to 24 characters, a longer one as its first 20 and an ellipsis."""
    with pytest.raises(ConfigError) as caught:
        SecretPolicy(policy=value)
    assert f"secret policy {shown} is unknown" in str(caught.value)
    with pytest.raises(ConfigError) as caught:
        SecretPolicy.from_config({"secrets": {"policy": value}})
    assert f"policy = {shown} in" in str(caught.value)
    with pytest.raises(ConfigError) as caught:
        SecretPolicy.from_config({"secrets": {value: 1}})
    assert f"[secrets] {shown} in .contextfs/config.toml is not a known key" in str(caught.value)


# -- long lines -------------------------------------------------------------------------


def _npmrc_line(length: int) -> str:
    """An .npmrc auth line whose registry path is long, padded to ``length`` characters:
    the registry's ``//`` is far (900 characters) before its ``_authToken``."""
    head = "//" + "registry.example.org/" + "a" * 880 + "/:_authToken="
    token = "9f3c0e7a1b4d6f2a8c5e0b9d7f1a3c6e4b2d"  # 36 hex characters
    line = head + token + " "
    return line + "#" * (length - len(line))


def test_a_line_of_4096_characters_is_scanned_whole() -> None:
    """Detectors that backtrack see a line *longer* than 4096 characters as windows around
    their needles; a line of exactly 4096 is read whole, so an npm registry line whose
    ``//`` is far before the token is still an npm token."""
    line = _npmrc_line(4096)
    assert len(line) == 4096
    assert [f.kind for f in scan(line)] == ["npm token"]


# -- values and names -----------------------------------------------------------------


def test_a_password_needs_three_classes_of_characters() -> None:
    """Eight random characters of lower case and digits only are two classes: not a
    password built to a policy; lower, upper and a symbol are three."""
    assert not credential_like("q7x2k9z4")
    assert not credential_like("qxzkwpbv")
    assert credential_like("qXzKwP!#")
    assert credential_like("q7x2K9z4")


def test_assigned_values_fold_the_text_themselves() -> None:
    text = 'deploy_token = "Qm9x7Rt2LpZ8vW4k"\n'
    expected = [(text.index("Qm9"), "Qm9x7Rt2LpZ8vW4k")]
    assert list(assigned_values(text)) == expected
    assert list(assigned_values(text, text.lower())) == expected
    # a folded copy of another length is not trusted: the text is folded again
    assert list(assigned_values(text, "x")) == expected
