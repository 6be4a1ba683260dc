"""Reading Trivy's secret scanner tests and Whispers' fixtures for the secret benchmark
(``secret_corpora_scanners``).

The trees below are written the ways those suites are: Trivy's ``scanner_test.go`` table of
findings with masked matches over ``testdata/`` files, and Whispers' fixtures split into
``Compliant`` / ``Noncompliant`` sections with the unit test that names them. Every value is
made up.
"""

from __future__ import annotations

from pathlib import Path

from secret_corpora_scanners import trivy_cases, whispers_cases

RULES_GO = """package secret

var builtinRules = []Rule{
	{
		ID:              "acme-token",
		Regex:           MustCompile(`acme_[a-z0-9]{20}`),
	},
	{
		ID:              "private-key",
	},
}
"""

TEST_GO = """package secret_test

func TestSecretScanner(t *testing.T) {
	wantAcme := types.SecretFinding{
		RuleID:    "acme-token",
		Category:  secret.CategoryAcme,
		StartLine: 2,
		EndLine:   2,
		Match:     "export ACME=" + strings.Repeat("*", 27),
		Offset:    35,
	}
	masked := func(ruleID string, line, length, offset int) types.SecretFinding {
		stars := strings.Repeat("*", length)
		return types.SecretFinding{
			RuleID:    ruleID,
			StartLine: line,
			EndLine:   line,
			Match:     stars,
			Offset:    offset,
		}
	}
	wantKey := masked("private-key", 2, 40, 32)

	tests := []struct {
		name          string
		configPath    string
		inputFilePath string
		want          types.Secret
	}{
		{
			name:          "find acme",
			inputFilePath: filepath.Join("testdata", "acme.txt"),
			want: types.Secret{
				FilePath: filepath.Join("testdata", "acme.txt"),
				Findings: []types.SecretFinding{wantAcme},
			},
		},
		{
			name:          "the same file under another configuration",
			configPath:    filepath.Join("testdata", "config.yaml"),
			inputFilePath: filepath.Join("testdata", "acme.txt"),
			want: types.Secret{
				Findings: []types.SecretFinding{
					wantAcme,
					{
						RuleID:    "rule1",
						StartLine: 1,
						EndLine:   1,
						Match:     "secret=\\"*************\\"",
						Offset:    8,
					},
					// a mask that does not agree with its file: left out
					{
						RuleID:    "acme-token",
						StartLine: 1,
						EndLine:   1,
						Match:     "token=*****",
						Offset:    6,
					},
				},
			},
		},
		{
			name:          "key",
			inputFilePath: "testdata/key.pem",
			want:          types.Secret{Findings: []types.SecretFinding{wantKey}},
		},
		{
			name:          "no findings",
			inputFilePath: "testdata/acme.txt",
			want:          types.Secret{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {})
	}
}

func TestSecretScannerWithStreaming(t *testing.T) {
	tests := []struct{ input string }{{input: "acme_q7bfggbemoztrhua4qhk"}}
}
"""

BODY = "MIIEowIBAAKCAQEAu7Nua0a1y08gkbnBfKd6VDHi"


def _trivy(tmp_path: Path) -> Path:
    root = tmp_path / "pkg" / "fanal" / "secret"
    (root / "testdata").mkdir(parents=True)
    (root / "builtin-rules.go").write_text(RULES_GO, "utf-8")
    (root / "scanner_test.go").write_text(TEST_GO, "utf-8")
    # CRLF line ends, which the test removes before scanning (offsets count without them)
    (root / "testdata" / "acme.txt").write_bytes(
        b'secret="x9Fq2LmZ7tRb4"\r\nexport ACME="acme_q7bfggbemoztrhua4qhk"\r\n'
    )
    pem = f"-----BEGIN RSA PRIVATE KEY-----\n{BODY}\n-----END RSA PRIVATE KEY-----\n"
    (root / "testdata" / "key.pem").write_text(pem, "utf-8")
    return tmp_path


def test_trivy_findings_are_the_lines_they_name_and_the_bytes_their_mask_hides(
    tmp_path: Path,
) -> None:
    cases, left_out = trivy_cases(_trivy(tmp_path))
    got = [(c.family, c.path, c.text, c.secrets, c.credential) for c in cases]
    assert got == [
        # quotes the mask covers are not part of the value; the repeated finding is one case
        (
            "acme-token",
            "testdata/acme.txt",
            'export ACME="acme_q7bfggbemoztrhua4qhk"',
            ("acme_q7bfggbemoztrhua4qhk",),
            True,
        ),
        # a rule the test's configuration defines is not a credential rule
        ("rule1", "testdata/acme.txt", 'secret="x9Fq2LmZ7tRb4"', ("x9Fq2LmZ7tRb4",), False),
        # a key body with its armour; the finding built by a function literal of the test
        (
            "private-key",
            "testdata/key.pem",
            f"-----BEGIN RSA PRIVATE KEY-----\n{BODY}\n-----END RSA PRIVATE KEY-----",
            (BODY,),
            True,
        ),
    ]
    assert left_out == 1
    assert trivy_cases(tmp_path) == trivy_cases(tmp_path / "pkg" / "fanal" / "secret")


def test_trivy_findings_pointing_outside_the_checkout_are_left_out(tmp_path: Path) -> None:
    root = _trivy(tmp_path) / "pkg" / "fanal" / "secret"
    (tmp_path / "outside.txt").write_text('export ACME="acme_q7bfggbemoztrhua4qhk"\n')
    test = TEST_GO.replace('filepath.Join("testdata", "acme.txt")', '"../../../outside.txt"')
    (root / "scanner_test.go").write_text(test, "utf-8")
    cases, left_out = trivy_cases(tmp_path)
    assert [c.path for c in cases] == ["testdata/key.pem"]
    assert left_out == 3


WHISPERS_TEST = """
@pytest.mark.parametrize(
    ("src", "expected"),
    [("keys.yml", ["rsa", "missing"]), ("short.yml", ["pwd"])],
)
def test_detection_by_key(src, expected):
    pass


@pytest.mark.parametrize(
    ("src", "count"),
    [("app.yml", 3), ("run.sh", 2), ("page.html", 1), ("empty.yml", 0)],
)
def test_detection_by_value(src, count):
    pass


@pytest.mark.parametrize(("src", "count", "rule_id"), [("page.html", 1, "comments")])
def test_detection_by_rule(src, count, rule_id):
    pass
"""

APP_YML = """# Compliant
password: hardcoded_in_compliant_section
api_key: "{{ API_KEY }}"

# Noncompliant
01_hardcoded_password: hardcoded0
credentials:
  password: "YXNkZmZmZmZm_HARDcoded"
  - "aGFyZGNvZGVkIHZhbHVl"
  numeric: 1234
"""

RUN_SH = """# Non-compliant
docker run -it \\
    -e DRONE_TOKEN=YXNkZmZmZmZm_HARDcoded \\
    image
curl --user admin:Xy7hardcoded https://localhost
"""


def _whispers(tmp_path: Path) -> Path:
    tests = tmp_path / "tests"
    (tests / "unit").mkdir(parents=True)
    (tests / "fixtures").mkdir()
    (tests / "unit" / "test_secrets.py").write_text(WHISPERS_TEST, "utf-8")
    fixtures = {
        "app.yml": APP_YML,
        "run.sh": RUN_SH,
        "page.html": "<!-- hardcoded comment 01 -->\n",
        "empty.yml": "# Noncompliant\npassword: hardcoded9\n",
        "keys.yml": f'public: "abc"\n# Noncompliant\nrsa: "-----BEGIN RSA PRIVATE KEY-----\\n{BODY}"\n',
        "short.yml": "# Noncompliant\npwd: admin\n",
    }
    for name, text in fixtures.items():
        (tests / "fixtures" / name).write_text(text, "utf-8")
    return tmp_path


def test_whispers_positives_are_marked_values_in_noncompliant_sections(tmp_path: Path) -> None:
    cases, left_out = whispers_cases(_whispers(tmp_path))
    got = [(c.path, c.text, c.secrets, c.credential) for c in cases]
    assert got == [
        # a name holding the marker is not a value; base64 of the marker is one
        ("app.yml", "01_hardcoded_password: hardcoded0", ("hardcoded0",), True),
        ("app.yml", '  password: "YXNkZmZmZmZm_HARDcoded"', ("YXNkZmZmZmZm_HARDcoded",), True),
        ("app.yml", '  - "aGFyZGNvZGVkIHZhbHVl"', ("aGFyZGNvZGVkIHZhbHVl",), True),
        # a command continued over lines is one text
        (
            "run.sh",
            "docker run -it \\\n    -e DRONE_TOKEN=YXNkZmZmZmZm_HARDcoded \\\n    image",
            ("YXNkZmZmZmZm_HARDcoded",),
            True,
        ),
        ("run.sh", "curl --user admin:Xy7hardcoded https://localhost", ("Xy7hardcoded",), True),
        # a file with no section is all positives; comments are not credentials
        ("page.html", "<!-- hardcoded comment 01 -->", ("hardcoded",), False),
        # an expected key: what follows it, the PEM armour aside
        (
            "keys.yml",
            f'rsa: "-----BEGIN RSA PRIVATE KEY-----\\n{BODY}"',
            (f"\\n{BODY}",),
            True,
        ),
    ]
    # the key "missing" is not in its file, and "admin" is too short to judge
    assert left_out == 2
    assert whispers_cases(tmp_path) == whispers_cases(tmp_path / "tests")
