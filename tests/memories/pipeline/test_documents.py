"""Documents as documents: text into paragraph, item and row blocks with their spans. Pure functions."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from memories.pipeline.documents import Block, document_blocks
from memories.pipeline.parse import extract_text
from tests.memories.test_documents import build_pdf


def blocks(text: str, media_type: str) -> list[tuple[str, str, str]]:
    """(kind, text, where it came from) of each block, after checking the spans are sound."""
    found = document_blocks(text, media_type)
    assert_sound_spans(text, found)
    return [(block.kind, block.text, text[block.start : block.end]) for block in found]


def assert_sound_spans(text: str, found: list[Block]) -> None:
    end = 0
    for block in found:
        assert end <= block.start < block.end <= len(text)
        assert text[block.start : block.end] == text[block.start : block.end].strip()
        assert any(character.isalnum() or character == "_" for character in block.text)
        assert block.kind in ("paragraph", "item", "row")
        end = block.end


NOTE = """---
title: Alice's notes
tags: [health, travel]
---
# Alice

Alice drinks *oolong* every **morning** with [Bob](https://example.com/bob), using `gaiwan` cups
and ![a clay pot](pot.png).

## Allergies

- peanuts
- shellfish, since 2019
- [ ] check sesame

## Travel

- Japan
  - Kyoto in April
  - We will stay with Hiro in Osaka.
- Places to see:
  - Nara
- I have never been to Peru.

## Books

| Book | Rating | Year |
|------|--------|------|
| Piranesi | 5/5 | 2020 |

```python
print("no facts in here")
```

    indented code is not a fact either

[Home](/) | [About](/about)

- [Allergies](#allergies)
- [Travel](#travel)

***

<div>raw html</div>

> Quoted: tea is
> good for you.

Things to pack:
- socks
"""


class TestMarkdown:
    def test_it_reads_a_note_as_a_person_would(self):
        assert blocks(NOTE, "text/markdown") == [
            (
                "paragraph",
                "Alice drinks oolong every morning with Bob, using gaiwan cups and a clay pot.",
                "Alice drinks *oolong* every **morning** with [Bob](https://example.com/bob), "
                "using `gaiwan` cups\nand ![a clay pot](pot.png).",
            ),
            ("item", "Allergies: peanuts", "- peanuts"),
            ("item", "Allergies: shellfish, since 2019", "- shellfish, since 2019"),
            ("item", "Allergies: check sesame", "- [ ] check sesame"),
            ("item", "Travel: Japan", "- Japan"),
            ("item", "Travel: Japan: Kyoto in April", "- Kyoto in April"),
            ("item", "We will stay with Hiro in Osaka.", "- We will stay with Hiro in Osaka."),
            ("item", "Travel: Places to see: Nara", "- Nara"),
            ("item", "I have never been to Peru.", "- I have never been to Peru."),
            ("row", "Piranesi: rating 5/5; year 2020", "| Piranesi | 5/5 | 2020 |"),
            ("paragraph", "Quoted: tea is good for you.", "Quoted: tea is\n> good for you."),
            ("item", "Things to pack: socks", "- socks"),
        ]

    def test_it_skips_empty_cells_and_reads_one_column_tables_as_their_cells(self):
        text = (
            "| Name | Role | Since |\n"
            "|---|---|---|\n"
            "| Alice | | 2019 |\n"
            "| | Editor | |\n"
            "| | | |\n"
            "| Bob |\n"
            "\n"
            "| Chores |\n"
            "|---|\n"
            "| dishes |\n"
            "\n"
            "| Only | A header |\n"
            "|---|---|\n"
        )
        assert blocks(text, "text/markdown") == [
            ("row", "Alice: since 2019", "| Alice | | 2019 |"),
            ("row", "role Editor", "| | Editor | |"),
            ("row", "Bob", "| Bob |"),
            ("row", "dishes", "| dishes |"),
        ]

    def test_it_keeps_acronyms_in_header_labels(self):
        assert (
            blocks("| Book | ISBN |\n|---|---|\n| Dune | 978-0 |", "text/markdown")[0][1]
            == "Dune: ISBN 978-0"
        )

    def test_it_gives_nothing_for_headings_alone(self):
        assert blocks("# Title\n\n## Section\n", "text/markdown") == []

    def test_it_does_not_split_a_long_paragraph(self):
        text = " ".join(["Alice walked to the market and bought tea."] * 200)
        assert blocks(text, "text/markdown") == [("paragraph", text, text)]

    def test_it_reads_only_front_matter_at_the_very_top(self):
        text = "Intro line.\n\n---\n\nAfter the rule."
        assert [block[1] for block in blocks(text, "text/markdown")] == ["Intro line.", "After the rule."]


PAGE = b"""<!DOCTYPE html>
<html><head><title>Alice</title><script>var tracking = 1;</script></head>
<body>
<header><a href="/">Home</a> <a href="/blog">Blog</a></header>
<nav><ul><li><a href="/a">About</a></li><li><a href="/c">Contact</a></li></ul></nav>
<main>
  <h1>Alice's tea</h1>
  <p>She drinks <b>oolong</b>
     every morning.</p>
  <h2>Favourites</h2>
  <ul><li>oolong</li><li>sencha<ul><li>from Shizuoka</li></ul></li></ul>
  <table>
    <tr><th>Tea</th><th>Price</th></tr>
    <tr><td>Oolong</td><td>12 EUR</td></tr>
  </table>
  <script>document.write("not text")</script>
</main>
<footer>Copyright 2024 Alice</footer>
</body></html>
"""


class TestHtml:
    def test_it_reads_a_page_through_its_markdown(self):
        document = extract_text(filename="alice.html", data=PAGE, max_bytes=1_000_000)
        assert document.media_type == "text/html"
        assert blocks(document.text, document.media_type) == [
            ("paragraph", "She drinks oolong every morning.", "She drinks oolong every morning."),
            ("item", "Favourites: oolong", "- oolong"),
            ("item", "Favourites: sencha", "- sencha"),
            ("item", "Favourites: sencha: from Shizuoka", "- from Shizuoka"),
            ("row", "Oolong: price 12 EUR", "| Oolong | 12 EUR |"),
        ]


class TestPlainText:
    def test_it_reflows_paragraphs_and_reads_lists_with_their_intro(self):
        text = (
            "Trip notes\n"
            "\n"
            "We arrived in Lisbon on a rainy\n"
            "Tuesday and went straight to the hotel.\n"
            "\n"
            "Shopping list:\n"
            "- milk\n"
            "- eggs and\n"
            "  fresh bread\n"
            "2) butter\n"
            "\n"
            "Packing\n"
            "\n"
            "\u2022 socks\n"
            "* I must not forget the passport.\n"
            "\n"
            "The end."
        )
        assert blocks(text, "text/plain") == [
            (
                "paragraph",
                "We arrived in Lisbon on a rainy Tuesday and went straight to the hotel.",
                "We arrived in Lisbon on a rainy\nTuesday and went straight to the hotel.",
            ),
            ("item", "Shopping list: milk", "- milk"),
            ("item", "Shopping list: eggs and fresh bread", "- eggs and\n  fresh bread"),
            ("item", "Shopping list: butter", "2) butter"),
            ("item", "Packing: socks", "\u2022 socks"),
            ("item", "I must not forget the passport.", "* I must not forget the passport."),
            ("paragraph", "The end.", "The end."),
        ]

    def test_it_keeps_a_last_short_line_as_a_paragraph(self):
        assert blocks("I like tea.\n\nCall mom tomorrow", "text/plain") == [
            ("paragraph", "I like tea.", "I like tea."),
            ("paragraph", "Call mom tomorrow", "Call mom tomorrow"),
        ]

    def test_it_treats_unknown_media_types_as_plain_text(self):
        assert blocks("# not markdown", "application/octet-stream") == [
            ("paragraph", "# not markdown", "# not markdown")
        ]


PDF_TEXT = (
    "ACME Quarterly Report\n"
    "Revenue grew by twelve percent in the\n"
    "third quarter, driven by new infor-\n"
    "mation services.\n"
    "Outlook\n"
    "The board expects growth to continue\n"
    "into next year.\n"
    "Key risks:\n"
    "\u2022 supply chain delays\n"
    "\u2022 currency\n"
    "ACME Confidential\n"
    "1\n"
    "\n"
    "ACME Quarterly Report\n"
    "Staff grew to 120 people. Most of the new\n"
    "hires work in Lisbon.\n"
    "ACME Confidential\n"
    "Page 2 of 3\n"
    "\n"
    "ACME Quarterly Report\n"
    "The next report is due in May.\n"
    "ACME Confidential\n"
    "- 3 -"
)


class TestPdf:
    def test_it_joins_wrapped_lines_and_drops_running_headers_footers_and_page_numbers(self):
        assert blocks(PDF_TEXT, "application/pdf") == [
            (
                "paragraph",
                "Revenue grew by twelve percent in the third quarter, driven by new information services.",
                "Revenue grew by twelve percent in the\n"
                "third quarter, driven by new infor-\n"
                "mation services.",
            ),
            (
                "paragraph",
                "The board expects growth to continue into next year.",
                "The board expects growth to continue\ninto next year.",
            ),
            ("item", "Key risks: supply chain delays", "\u2022 supply chain delays"),
            ("item", "Key risks: currency", "\u2022 currency"),
            (
                "paragraph",
                "Staff grew to 120 people. Most of the new hires work in Lisbon.",
                "Staff grew to 120 people. Most of the new\nhires work in Lisbon.",
            ),
            ("paragraph", "The next report is due in May.", "The next report is due in May."),
        ]

    def test_it_keeps_the_hyphen_of_a_compound_broken_at_a_line_end(self):
        text = "The Franco-\nGerman border and the COVID-\n19 rules were set- up. A long -\nstory."
        assert [block[1] for block in blocks(text, "application/pdf")] == [
            "The Franco-German border and the COVID-19 rules were set- up. A long - story."
        ]

    def test_it_keeps_the_first_line_of_a_single_page(self):
        assert blocks("Alice likes tea.", "application/pdf") == [
            ("paragraph", "Alice likes tea.", "Alice likes tea.")
        ]

    def test_it_reads_a_real_pdf_end_to_end(self):
        pages = [
            "Tea Notes\nAlice drinks oolong every morning and\nsencha in the after-\nnoon.\n"
            "Tea Notes - draft\n1",
            "Tea Notes\nBob prefers coffee.\nTea Notes - draft\n2",
            "Tea Notes\nCharlie drinks water.\nTea Notes - draft\n3",
        ]
        document = extract_text(filename="tea.pdf", data=build_pdf(pages), max_bytes=1_000_000)
        assert [block[1] for block in blocks(document.text, document.media_type)] == [
            "Alice drinks oolong every morning and sencha in the afternoon.",
            "Bob prefers coffee.",
            "Charlie drinks water.",
        ]


MARKDOWNISH = st.lists(
    st.one_of(
        st.sampled_from(
            [
                "# ",
                "## ",
                "- ",
                "  - ",
                "    ",
                "* ",
                "1. ",
                "2) ",
                "> ",
                "| a | b |",
                "|---|---|",
                "| ",
                "```",
                "~~~",
                "---",
                "***",
                "[x](y)",
                "![a](b)",
                "`c`",
                "*e*",
                "_",
                "word",
                "Word.",
                "\n",
                "\n\n",
                " ",
                "\t",
                "\r",
                "<div>",
                "&amp;",
                "\\",
                ":",
                "\u2022 ",
                "infor-",
                "Page 1",
                "7",
            ]
        ),
        st.text(max_size=8),
    ),
    max_size=40,
).map("".join)


class TestProperties:
    @settings(max_examples=300, deadline=None)
    @given(
        text=MARKDOWNISH,
        media_type=st.sampled_from(["text/markdown", "text/html", "text/plain", "application/pdf"]),
    )
    def test_it_never_raises_and_spans_are_sound(self, text, media_type):
        assert_sound_spans(text, document_blocks(text, media_type))
