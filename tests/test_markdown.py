"""Markdown from the bank is rendered and sanitized: no script survives."""
import pytest

from exams.markdown import render_markdown


@pytest.mark.parametrize(
    "source",
    [
        "<script>alert(1)</script>Hello",
        '<img src="x" onerror="alert(1)">',
        "[click](javascript:alert(1))",
        '<a href="javascript:alert(1)">x</a>',
        '<p style="color:red" onclick="alert(1)">styled</p>',
        "<iframe src='https://evil.example'></iframe>",
    ],
)
def test_dangerous_markup_renders_inert(source):
    html = render_markdown(source).lower()
    for marker in ("<script", "onerror", "href=\"javascript:", "onclick", "style=", "<iframe"):
        assert marker not in html


def test_ordinary_markdown_renders():
    html = render_markdown("Use **FP16** with `torch.autocast`:\n\n- one\n- two\n\n| a | b |\n|---|---|\n| 1 | 2 |")
    assert "<strong>FP16</strong>" in html
    assert "<code>torch.autocast</code>" in html
    assert "<li>one</li>" in html
    assert "<td>1</td>" in html


def test_links_get_a_safe_rel():
    assert 'rel="noopener noreferrer nofollow"' in render_markdown("[docs](https://docs.nvidia.com)")


def test_sources_that_name_a_web_address_are_links():
    from exams.markdown import render_sources

    html = render_sources(
        '- [Radford et al. (2021), "CLIP"](https://arxiv.org/abs/2103.00020) — checked against arXiv 2103.00020v1, 2026-11\n'
        "- NeMo user guide, https://docs.nvidia.com/nemo-framework/user-guide/latest/ (checked 2026-11).\n"
        "- A book with no address"
    )
    assert html.count("<a ") == 2
    assert '<a href="https://arxiv.org/abs/2103.00020" rel="noopener noreferrer nofollow">Radford et al. (2021), "CLIP"</a>' in html
    assert '<a href="https://docs.nvidia.com/nemo-framework/user-guide/latest/" rel="noopener noreferrer nofollow">' in html
    assert "A book with no address" in html
    # Only http and https addresses become links.
    assert "href" not in render_sources("javascript:alert(1), ftp://files.example/x")
