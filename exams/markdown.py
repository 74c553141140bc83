"""Markdown from the question bank rendered to HTML that is safe to show learners."""
import re
from functools import lru_cache

import nh3
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt

_markdown = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])

# Everything a question needs (code, tables, lists, emphasis, images from our own site);
# nh3 drops scripts, event handlers, style attributes and javascript: URLs.
ALLOWED_TAGS = {
    "p", "br", "hr", "em", "strong", "del", "s", "code", "pre", "blockquote", "ul", "ol", "li",
    "a", "img", "h3", "h4", "h5", "h6", "table", "thead", "tbody", "tr", "th", "td", "sub", "sup", "kbd",
}
ALLOWED_ATTRIBUTES = {"a": {"href", "title"}, "img": {"src", "alt", "title"}, "th": {"align"}, "td": {"align"}}


# An exhibit image is written ![alt](exhibit:name.png); it is served by the exhibit view,
# which checks that the viewer holds the question.
_EXHIBIT_IMAGE = re.compile(r"\]\(exhibit:([\w.-]+)\)")


@lru_cache(maxsize=4096)
def render_markdown(text: str, exhibits_of: int | None = None) -> SafeString:
    text = text or ""
    if exhibits_of is not None:
        from django.urls import reverse

        text = _EXHIBIT_IMAGE.sub(
            lambda m: "](" + reverse("exams:exhibit", args=[exhibits_of, m.group(1)]) + ")", text
        )
    return _clean(_markdown.render(text))


# A bare web address in a source ("checked against https://…"), not one already a link's target.
_BARE_URL = re.compile(r"(?<![(<\w/\]])(https?://[^\s<>()\[\]]+[^\s<>()\[\].,;:!?'\"])")


@lru_cache(maxsize=4096)
def render_sources(text: str) -> SafeString:
    """A question's sources ("Learn more"): Markdown, and a web address written bare is a link too."""
    return render_markdown(_BARE_URL.sub(r"<\1>", text or ""))


# An image in the cleaned HTML (nh3 writes attributes double-quoted and escaped).
_IMAGE = re.compile(r'<img\b[^>]*?\bsrc="([^"]+)"[^>]*>')


@lru_cache(maxsize=4096)
def render_exhibit(text: str, question_id: int) -> SafeString:
    """A question's exhibit: its images fit the width and open full size in a new tab on a
    click or a tap, so a chart's labels can be read on a phone (a plain link: no script)."""
    html = render_markdown(text, exhibits_of=question_id)
    return mark_safe(_IMAGE.sub(
        lambda m: f'<a class="exhibit-image" href="{m.group(1)}" target="_blank" rel="noopener">{m.group(0)}'
        '<span class="exhibit-open">Open full size<span class="visually-hidden"> (new tab)</span></span></a>',
        html,
    ))


@lru_cache(maxsize=4096)
def render_inline_markdown(text: str) -> SafeString:
    """Markdown of one line (a choice, a feedback line): code, emphasis, links; no blocks."""
    return _clean(_markdown.renderInline(text or ""))


def _clean(html: str) -> SafeString:
    clean = nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer nofollow",
    )
    return mark_safe(clean)
