"""HTML → Markdown for imported texts: the sanitized subset, each shown as the renderer shows it."""
import html
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exams.bank.formats.htmltext import MAX_DEPTH, html_to_markdown, html_to_plain_text
from exams.markdown import render_inline_markdown, render_markdown


def markdown(text: str, **options) -> str:
    converted = html_to_markdown(text, **options)
    assert not converted.problems, converted.problems
    return converted.markdown


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("<p>a <b>bold</b> and <i>italic</i> word</p>", "a **bold** and *italic* word"),
        ("<p>x<em>[y]</em>z</p>", "x<em>\\[y\\]</em>z"),  # *\[y\]* would not be emphasis
        ("<p>H<sub>2</sub>O, E = mc<sup>2</sup>, <del>old</del></p>", "H<sub>2</sub>O, E = mc<sup>2</sup>, <del>old</del>"),
        ("<p>run <code>a`b</code></p>", "run ``a`b``"),
        ('<p><a href="https://example.com/a b" title="T &quot;q&quot;">docs</a></p>', '[docs](<https://example.com/a b> "T \\"q\\"")'),
        ("<p>one<br>two</p><p>three</p>", "one\\\ntwo\n\nthree"),
        ("Select all primes:<br>", "Select all primes:"),
        ("<ul><li>one</li><li>two<ul><li>nested</li></ul></li></ul><ul><li>next list</li></ul>", "- one\n- two\n  - nested\n\n* next list"),
        ("<ol><li>a<p>b</p></li><li>c</li></ol>", "1. a\n\n   b\n\n2. c"),
        ("<pre>x = 1\n  `y`\n</pre>", "```\nx = 1\n  `y`\n```"),
        ("<blockquote><p>q1</p><p>q2</p></blockquote>", "> q1\n>\n> q2"),
        ("<h1>Big</h1><h4>Small</h4><hr><p>after</p>", "### Big\n\n#### Small\n\n---\n\nafter"),
        ("<table><tr><td>a &amp; b</td></tr></table>", "<table><tbody><tr><td>a &amp; b</td></tr></tbody></table>"),
        ("<p>1. not a list, # nor a heading, &lt;b&gt; nor a tag, a &amp; b</p>", "1\\. not a list, \\# nor a heading, \\<b\\> nor a tag, a & b"),
        ("<p>&amp;copy; stays text</p>", "\\&copy; stays text"),
        ('<p onclick="x()">Pick <script>alert(1)</script><span style="color:red">one</span></p>', "Pick one"),
    ],
)
def test_each_tag_of_the_subset(source, expected):
    assert markdown(source) == expected


def test_the_markdown_renders_as_the_sanitized_html():
    source = "<p>a <b>bold</b> <i>it</i> <code>c</code> <a href=\"https://x.test/\">l</a></p><ul><li>one</li><li>two</li></ul>"
    assert render_markdown(markdown(source)).replace("\n", "") == (
        '<p>a <strong>bold</strong> <em>it</em> <code>c</code> <a href="https://x.test/" rel="noopener noreferrer nofollow">l</a>'
        "</p><ul><li>one</li><li>two</li></ul>"
    )


def test_inline_text_has_no_blocks():
    assert markdown("<p>one</p><ul><li>two</li></ul><pre>a\nb</pre>", inline=True) == "one\\\ntwo\\\n`a b`"
    assert render_inline_markdown(markdown("<p>Yes: <b>it</b></p><p>Really.</p>", inline=True)) == (
        "Yes: <strong>it</strong><br>\nReally."
    )


def test_embedded_images_are_taken_out_and_other_images_refused():
    converted = html_to_markdown('<p>Moodle <img src="@@PLUGINFILE@@/logo%201.png" alt="Logo"> rocks <img src="http://x.test/a.png"></p>')
    assert converted.markdown == "Moodle rocks"
    assert converted.images == [("Logo", "logo 1.png")]
    assert converted.problems == ["it shows an image the file does not embed (http://x.test/a.png): certprep shows only embedded images"]
    assert html_to_markdown('<a href="@@PLUGINFILE@@/talk.mp3">listen</a>').linked_files == ["talk.mp3"]


def test_html_nested_too_deeply_is_refused():
    converted = html_to_markdown("<blockquote>" * (MAX_DEPTH + 5) + "x" + "</blockquote>" * (MAX_DEPTH + 5))
    assert converted.problems == [f"its HTML is nested more than {MAX_DEPTH} elements deep"]


def test_a_name_loses_its_tags():
    assert html_to_plain_text("x <strong>&gt;</strong> 1 &amp; y") == "x > 1 & y"


_INLINE_TAG = re.compile(r"</?(?:b|i|em|strong|code|sub|sup|del|s|kbd|span|a)\b[^>]*>")


def shown_text(rendered: str) -> str:
    """The words a browser shows: inline tags join, block tags and breaks separate."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", _INLINE_TAG.sub("", rendered))).split())


@settings(max_examples=200, deadline=None)
@given(st.text(st.characters(exclude_categories=("Cs", "Cc", "Cn")), max_size=40))
def test_any_text_shows_as_it_did_in_moodle(text):
    # The text of a paragraph survives the conversion and the renderer character for character.
    source = f"<p>{html.escape(text)}</p>"
    expected = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", html.escape(text))).split())
    assert shown_text(render_markdown(markdown(source))) == expected


words = st.text(st.characters(exclude_categories=("Cs", "Cc", "Cn")), min_size=1, max_size=12).map(html.escape)
INLINE = ["b", "i", "em", "strong", "code", "sub", "sup", "del", "kbd", "span"]
BLOCK = ["p", "div", "blockquote", "h2", "h4", "pre"]


def element(children: st.SearchStrategy) -> st.SearchStrategy:
    def wrap(tag_and_parts):
        tag, parts = tag_and_parts
        if tag == "ul" or tag == "ol":
            return f"<{tag}>" + "".join(f"<li>{part}</li>" for part in parts) + f"</{tag}>"
        if tag == "a":
            return f'<a href="https://example.com/">{"".join(parts)}</a>'
        if tag == "br":
            return "<br>"
        return f"<{tag}>{''.join(parts)}</{tag}>"

    return st.tuples(st.sampled_from(INLINE + BLOCK + ["ul", "ol", "a", "br"]), st.lists(children, max_size=3)).map(wrap)


fragments = st.recursive(words, element, max_leaves=12)


def text_of(source: str) -> str:
    # What a browser shows of the sanitized source, as words.
    from exams.bank.formats.htmltext import sanitize

    return shown_text(sanitize(source))


@settings(max_examples=150, deadline=None)
@given(st.lists(fragments, min_size=1, max_size=4).map("".join))
def test_nested_html_keeps_its_text(source):
    assert shown_text(render_markdown(markdown(source))) == text_of(source)
