"""Reading TruffleHog's detector tests for the secret benchmark (``secret_corpora.detector_cases``).

The Go below is written the ways those test tables are: a ``var`` block, raw and interpreted
strings, ``+``, ``fmt.Sprintf`` and names bound in the test function. Every value in it is
made up.
"""

from __future__ import annotations

from pathlib import Path

from secret_corpora import detector_cases, glued

GO = r"""package acme

import (
	"fmt"
	"testing"
)

var (
	validKey   = "ak_9fQ2xLm7Rt4Vb8Nc3Hd6Jw1Zp5Ks0Yg"
	invalidKey = "ak_9fQ2?Lm7Rt4Vb8Nc3Hd6Jw1Zp5Ks0Yg"
	keyword    = "acme"
	validPattern = `
		# config.yaml
		acme:
			api_key: "` + validKey + `"
	`
)

func TestAcme_Pattern(t *testing.T) {
	secret := "sec-" + "Q7bFGgbEMoZtRHuA4QHk"
	tests := []struct {
		name  string
		input string
		want  []string
	}{
		{
			name:  "with keyword",
			input: fmt.Sprintf("%s token = '%s'", keyword, validKey),
			want:  []string{validKey},
		},
		{
			name:  "yaml",
			input: validPattern,
			want:  []string{validKey},
		},
		{
			name:  "escaped and quoted",
			input: "ACME_SECRET=\"" + secret + "\"\n" + fmt.Sprintf("id=%q", "x1"),
			want:  []string{secret, validKey + ":" + secret},
		},
		{
			name:  "invalid pattern",
			input: fmt.Sprintf("%s = '%s'", keyword, invalidKey),
			want:  nil,
		},
		{
			name:  "empty want",
			input: validPattern,
			want:  []string{},
		},
		{
			name:  "built by a helper",
			input: makeInput(validKey),
			want:  []string{validKey},
		},
		{
			name:  "a width the reader does not reproduce",
			input: fmt.Sprintf("%-10s %s", keyword, validKey),
			want:  []string{validKey},
		},
	}
	_ = tests
}
"""


def _tree(tmp_path: Path) -> Path:
    detectors = tmp_path / "pkg" / "detectors"
    (detectors / "acme" / "v2").mkdir(parents=True)
    (detectors / "acme" / "v2" / "acme_test.go").write_text(GO, "utf-8")
    # Integration tests call the vendor's API; the package-level tests are the framework's own.
    (detectors / "acme" / "v2" / "acme_integration_test.go").write_text(GO, "utf-8")
    (detectors / "detectors_test.go").write_text(GO, "utf-8")
    return tmp_path


def test_positive_entries_are_read_as_the_test_writes_them(tmp_path: Path) -> None:
    cases, unresolved = detector_cases(_tree(tmp_path))
    key, secret = "ak_9fQ2xLm7Rt4Vb8Nc3Hd6Jw1Zp5Ks0Yg", "sec-Q7bFGgbEMoZtRHuA4QHk"
    assert [(c.family, c.path, c.name, c.text, c.secrets) for c in cases] == [
        ("acme", "acme/v2/acme_test.go", "with keyword", f"acme token = '{key}'", (key,)),
        (
            "acme",
            "acme/v2/acme_test.go",
            "yaml",
            f'\n\t\t# config.yaml\n\t\tacme:\n\t\t\tapi_key: "{key}"\n\t',
            (key,),
        ),
        (
            "acme",
            "acme/v2/acme_test.go",
            "escaped and quoted",
            f'ACME_SECRET="{secret}"\nid="x1"',
            (secret, f"{key}:{secret}"),
        ),
    ]
    # A helper call and a padded verb are left out and counted, never guessed.
    assert unresolved == 2


def test_the_folder_may_be_the_repository_or_its_detectors(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    assert detector_cases(root) == detector_cases(root / "pkg" / "detectors")


def test_a_secret_glued_to_other_text_is_told_from_one_standing_apart() -> None:
    token = "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"
    cases = [
        ("hf", f"HF_TOKEN={token}", [token]),  # apart: `=` before, the end after
        ("hf", f"{token}extra", [token]),  # glued after
        ("hf", token * 3, [token]),  # copies back to back: no occurrence stands apart
        ("hf", f"{token}{token} {token}", [token]),  # the third copy stands apart
        ("hf", f"{token}_extra", [token]),  # an underscore is a separator
        (
            "hf",
            f"key: {token}x and id: 9{'a' * 8}",
            [token, "a" * 8],
        ),  # a placeholder is not judged
        ("acme", "acme id1 secret2", ["id1:secret2"]),  # parts joined: not written literally
        ("acme", "xxxxxxxxxx1", ["xxxxxxxxxx"]),  # only placeholders: nothing to judge
    ]
    assert glued(cases) == {
        ("hf", f"{token}extra"),
        ("hf", token * 3),
        ("hf", f"key: {token}x and id: 9{'a' * 8}"),
    }
