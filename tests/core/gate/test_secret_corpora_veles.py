"""Reading Veles' detector tests for the secret benchmark (``secret_corpora_veles``).

The tree below is written the way a checkout of osv-scalibr is (one folder per detector
under ``veles/secrets/``, Go test tables of ``input`` and ``want``); every value is made up.
"""

from __future__ import annotations

from pathlib import Path

from secret_corpora_veles import veles_cases

TOKEN = "acme_Zk29fLq8Xv03NmW7pRt5Yh2a"

DETECTOR_TEST = f"""
package acmetoken_test

const testToken = "{TOKEN}"

func TestDetector_truePositives(t *testing.T) {{
	cases := []struct {{
		name  string
		input string
		want  []veles.Secret
	}}{{{{
		name:  "simple matching string",
		input: testToken,
		want: []veles.Secret{{
			acmetoken.Token{{Token: testToken}},
		}},
	}}, {{
		name:  "in an env file",
		input: "ACME_CLIENT=client-0042-abcd\\nACME_TOKEN=" + testToken + "\\n",
		want: []veles.Secret{{
			acmetoken.Token{{
				ClientID: "client-0042-abcd", // written there, but an id, not the credential
				Token:    testToken,
				Secret:   "derived-from-the-token", // not in the input: no secret written there
				Count:    2,
			}},
		}},
	}}, {{
		name:  "formatted",
		input: fmt.Sprintf(`token: %s`, testToken),
		want:  []veles.Secret{{acmetoken.Token{{Token: testToken}}}},
	}}, {{
		name:  "built by a function the reader does not run",
		input: strings.Repeat(testToken, 2),
		want:  []veles.Secret{{acmetoken.Token{{Token: testToken}}}},
	}}, {{
		name:  "a secret the detector derives",
		input: "acme",
		want:  []veles.Secret{{acmetoken.Token{{Token: "acme-derived-value"}}}},
	}}}}
}}

func TestDetector_trueNegatives(t *testing.T) {{
	cases := []struct {{
		name  string
		input string
		want  []veles.Secret
	}}{{{{
		name:  "wrong prefix",
		input: "acne_Zk29fLq8Xv03NmW7pRt5Yh2a",
	}}, {{
		name:  "explicitly nothing",
		input: testToken + "x",
		want:  nil,
	}}}}
}}
"""

VALIDATOR_TEST = f"""
package acmetoken_test

func TestValidator(t *testing.T) {{
	cases := []struct {{ input string; want []veles.Secret }}{{{{
		input: "{TOKEN}",
		want:  []veles.Secret{{acmetoken.Token{{Token: "{TOKEN}"}}}},
	}}}}
}}
"""


def _checkout(root: Path) -> Path:
    folder = root / "veles" / "secrets" / "acmetoken"
    folder.mkdir(parents=True)
    (folder / "detector_test.go").write_text(DETECTOR_TEST, "utf-8")
    (folder / "token_validator_test.go").write_text(VALIDATOR_TEST, "utf-8")
    common = root / "veles" / "secrets" / "common"
    common.mkdir()
    (common / "helpers_test.go").write_text(DETECTOR_TEST, "utf-8")
    return root


def test_positive_entries_their_secrets_and_what_is_left_out(tmp_path: Path) -> None:
    cases, left_out = veles_cases(_checkout(tmp_path))
    by_text = {c.text: c for c in cases if c.path == "acmetoken/detector_test.go"}
    assert list(by_text) == [
        TOKEN,
        f"ACME_CLIENT=client-0042-abcd\nACME_TOKEN={TOKEN}\n",
        f"token: {TOKEN}",
    ]
    for case in by_text.values():
        assert case.family == "acmetoken"
        assert case.secrets == (TOKEN,)  # not the client id, the derived value or the count
        assert case.source == "veles" and case.credential and case.rule == "detector"
    # validator tests and the shared helpers' folder are not read
    assert {c.path for c in cases} == {"acmetoken/detector_test.go"}
    # strings.Repeat is not run; a secret the input does not hold is not one written there
    assert left_out == 2


def test_the_secrets_folder_itself_may_be_given(tmp_path: Path) -> None:
    root = _checkout(tmp_path)
    assert veles_cases(root / "veles" / "secrets") == veles_cases(root)


def test_a_field_holds_a_credential_by_its_name() -> None:
    from secret_corpora_veles import secret_field

    for name in ("Key", "Token", "Secret", "Pat", "ClientSecret", "PrivateKey", "Refresh"):
        assert secret_field(name), name
    for name in ("ID", "AccessID", "ClientID", "Username", "FullURL", "TokenURI", "PublicB64"):
        assert not secret_field(name), name
