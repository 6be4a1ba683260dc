"""Reading the test inputs of ripsecrets for the secret benchmark (``secret_corpora_ripsecrets``).

The tree below is written the way a checkout of ripsecrets is (its patterns in Rust string
literals in ``src/lib.rs`` and ``src/matcher/mod.rs``, inputs in ``test/one_per_line/`` and
``test/one_per_file/``); every value is made up.
"""

from __future__ import annotations

from pathlib import Path

from secret_corpora_ripsecrets import ripsecrets_cases, ripsecrets_regexes

LIB_RS = r"""
mod matcher;

fn predefined_secret_regexes() -> Vec<&'static str> {
    return vec![
        r"[A-Za-z]+://\S{3,50}:(\S{8,50})@[\dA-Za-z.]+", // URL, with "//" in the string
        r"acme_[\da-z]{20}",                              // Acme
        "-{5}BEGIN PRIVATE KEY-{5}(?:$|[^-]{63,}-{5}END)",
        matcher::RANDOM_STRING_REGEX,
    ];
}

fn combined_regex(regexes: &[&str]) -> String {
    String::from("(")
}
"""
MOD_RS = r"""
pub const RANDOM_STRING_REGEX: &str = r#"(?i:key|token)\w*\s*=\s*"?([\w+./=~-]{15,90})"#;
"""
KEY_BODY = "MIIEpQIBAAKCAQEAq8w7e6r5t4y3u2i1o0pzZk9Lm3Nb7Vc5Xx1Qw2Er4Ty6Ui8Op0AsZx"


def test_positives_patterns_and_what_is_left_out(tmp_path: Path) -> None:
    (tmp_path / "src" / "matcher").mkdir(parents=True)
    (tmp_path / "src" / "lib.rs").write_text(LIB_RS, "utf-8")
    (tmp_path / "src" / "matcher" / "mod.rs").write_text(MOD_RS, "utf-8")
    lines = tmp_path / "test" / "one_per_line"
    files = tmp_path / "test" / "one_per_file"
    lines.mkdir(parents=True)
    files.mkdir(parents=True)
    (lines / "acme").write_text("acme_q8w7e6r5t4y3u2i1o0pz\n\nacme_k = short\n", "utf-8")
    (lines / "random").write_text('api_key = "Zq8W7e6R5t4Y3u2I1o"\n', "utf-8")
    (lines / "url").write_text("https://deploy:Tr0ub4dor-x9@db.example.org\n", "utf-8")
    key = f"-----BEGIN PRIVATE KEY-----\n{KEY_BODY}\n-----END PRIVATE KEY-----\n"
    (files / "private_key").write_text(key, "utf-8")

    assert ripsecrets_regexes(tmp_path)[0].startswith("[A-Za-z]+://")
    assert ripsecrets_regexes(tmp_path)[-1].startswith("(?i:key|token)")

    cases, left_out = ripsecrets_cases(tmp_path)

    acme, random, url, private = cases
    assert (acme.source, acme.family, acme.path) == ("ripsecrets", "acme", "one_per_line/acme")
    assert acme.text == "acme_q8w7e6r5t4y3u2i1o0pz" and acme.credential
    assert acme.secrets == ("acme_q8w7e6r5t4y3u2i1o0pz",)
    # The random-string rule reports its group, the value; random and url are of no vendor.
    assert (random.family, random.secrets) == ("generic", ("Zq8W7e6R5t4Y3u2I1o",))
    assert (url.family, url.secrets) == ("generic", ("Tr0ub4dor-x9",))
    # A file of one_per_file is one case, the whole file; its family is the file's name.
    assert (private.family, private.text) == ("private-key", key)
    assert private.secrets == (KEY_BODY,)
    # The line no pattern finds is counted, not guessed; the blank line is no input.
    assert left_out == 1
