"""HTML from another system (Moodle) as certprep Markdown: sanitized first, then converted."""
# Why our own conversion and not a library: nh3, the sanitizer the renderer already uses,
# first cuts the HTML down to the tags the renderer allows (plus <b>, <i>, <div>, <h1>,
# <h2>, which become their Markdown equivalents) and serializes it normalized (balanced
# tags, quoted attributes, escaped text), so the standard library's HTMLParser reads it
# exactly and the converter has only that small subset to handle. Every text goes through
# escape_markdown(), so it shows exactly as it did in Moodle; where Markdown syntax would
# be ambiguous (emphasis next to punctuation, sub/superscript, strike-through, tables) the
# converter writes the sanitized HTML tag itself, which the renderer accepts. A general
# converter (markdownify, on BeautifulSoup) would bring two dependencies and escaping
# rules of its own that we would still have to check against our renderer.
import html
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from urllib.parse import unquote

import nh3

from exams.bank.formats import escape_markdown
from exams.markdown import ALLOWED_ATTRIBUTES, ALLOWED_TAGS

__all__ = ["PLUGINFILE", "Converted", "html_to_markdown", "html_to_plain_text"]

PLUGINFILE = "@@PLUGINFILE@@/"
_IMPORT_TAGS = ALLOWED_TAGS | {"b", "i", "div", "h1", "h2"}
_BLOCK_TAGS = {"p", "div", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li", "blockquote", "pre", "table", "hr"}
_VOID_TAGS = {"br", "hr", "img"}
_RAW_INLINE = {"sub", "sup", "kbd", "del", "s"}
# Deeper HTML than this is refused rather than converted (the converter recurses).
MAX_DEPTH = 100
_SPACE = re.compile(r"[ \t\n\r\f]+")


@dataclass
class Converted:
    markdown: str
    # Images the text shows that the file embeds: (alt text, path after @@PLUGINFILE@@/).
    images: list[tuple[str, str]] = field(default_factory=list)
    # Embedded files the text links to (not as images): path after @@PLUGINFILE@@/.
    linked_files: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


@dataclass
class _Node:
    tag: str
    attrs: dict[str, str]
    children: list["_Node | str"] = field(default_factory=list)


class _TooDeep(Exception):
    pass


class _Tree(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = _Node("root", {})
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = _Node(tag, {name: value or "" for name, value in attrs})
        self.stack[-1].children.append(node)
        if tag not in _VOID_TAGS:
            if len(self.stack) > MAX_DEPTH:
                raise _TooDeep
            self.stack.append(node)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.stack[-1].children.append(_Node(tag, {name: value or "" for name, value in attrs}))

    def handle_endtag(self, tag: str) -> None:
        for depth in range(len(self.stack) - 1, 0, -1):
            if self.stack[depth].tag == tag:
                del self.stack[depth:]
                return

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)


def sanitize(text: str) -> str:
    return nh3.clean(
        text,
        tags=_IMPORT_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes={"http", "https", "mailto"},
        link_rel=None,
        strip_comments=True,
    )


def html_to_plain_text(text: str) -> str:
    """The text of some HTML, tags dropped and entities decoded (for a title)."""
    return html.unescape(nh3.clean(text, tags=set()))


def html_to_markdown(text: str, *, inline: bool = False) -> Converted:
    """Sanitized HTML as Markdown; inline=True for a choice or feedback (no block syntax)."""
    tree = _Tree()
    converted = Converted(markdown="")
    try:
        tree.feed(sanitize(text))
        tree.close()
        writer = _Writer(converted)
        converted.markdown = writer.flat(tree.root.children) if inline else "\n\n".join(writer.blocks(tree.root.children))
    except (_TooDeep, RecursionError):
        converted.problems.append(f"its HTML is nested more than {MAX_DEPTH} elements deep")
    converted.markdown = converted.markdown.strip(" \t\n")
    return converted


_NOT_AN_ENTITY = re.compile(r"\\&(?![A-Za-z0-9#]{1,32};)")


def _escape(text: str) -> str:
    # escape_markdown() escapes every &; only one that starts an entity needs it ("a & b" stays).
    return _NOT_AN_ENTITY.sub("&", escape_markdown(text))


def _collapse(text: str) -> str:
    return _SPACE.sub(" ", text)


def _text_content(node: _Node) -> str:
    return "".join(_child_text(child) for child in node.children)


def _child_text(node: "_Node | str") -> str:
    if isinstance(node, str):
        return node
    if node.tag == "br":
        return "\n"
    # A block inside code (or a preformatted text) still starts a line of its own.
    return f"\n{_text_content(node)}\n" if node.tag in _BLOCK_TAGS else _text_content(node)


def _trim_breaks(text: str) -> str:
    # A hard break at either end of a paragraph would show as a backslash.
    text = text.strip(" \t\n")
    # Escaped backslashes come in pairs: an odd one at the end is a hard break's.
    while (len(text) - len(text.rstrip("\\"))) % 2:
        text = text[:-1].rstrip(" \t\n")
    while text.startswith("\\\n"):
        text = text[2:].lstrip(" \t\n")
    return text


def _indent(text: str, width: int) -> str:
    pad = " " * width
    return "\n".join(pad + line if line else line for line in text.split("\n"))


class _Writer:
    def __init__(self, converted: Converted) -> None:
        self.converted = converted

    # Blocks -----------------------------------------------------------------------------

    def blocks(self, nodes: list) -> list[str]:
        return [block for block, _ in self.blocks_and_kinds(nodes)]

    def blocks_and_kinds(self, nodes: list) -> list[tuple[str, str]]:
        blocks: list[str] = []
        kinds: list[str] = []
        run: list = []

        def flush() -> None:
            paragraph = _trim_breaks(self.inline(run))
            run.clear()
            if paragraph:
                blocks.append(paragraph)
                kinds.append("p")

        for node in nodes:
            if isinstance(node, _Node) and node.tag in _BLOCK_TAGS:
                flush()
                for block, kind in self.block(node, previous=kinds[-1] if kinds else ""):
                    blocks.append(block)
                    kinds.append(kind)
            else:
                run.append(node)
        flush()
        return list(zip(blocks, kinds))

    def block(self, node: _Node, *, previous: str) -> list[tuple[str, str]]:
        tag = node.tag
        if tag in ("p", "div", "li"):
            return [(block, "p") for block in self.blocks(node.children)]
        if tag == "hr":
            return [("---", "hr")]
        if tag[0] == "h":
            text = self.inline(node.children).replace("\\\n", " ").strip(" \t\n")
            return [("#" * max(3, int(tag[1])) + " " + text, "h")] if text else []
        if tag in ("ul", "ol"):
            return self.list_block(node, previous=previous)
        if tag == "blockquote":
            inner = "\n\n".join(self.blocks(node.children))
            return [("\n".join(f"> {line}" if line else ">" for line in inner.split("\n")), "q")] if inner else []
        if tag == "pre":
            code = _text_content(node).removesuffix("\n")
            runs = [len(run) for run in re.findall(r"`+", code)]
            fence = "`" * max(3, max(runs, default=0) + 1)
            return [(f"{fence}\n{code}\n{fence}", "pre")]
        if tag == "table":
            # Markdown tables hold one line per cell; the sanitized table itself, on one
            # line, is an HTML block the renderer passes to the sanitizer as it is.
            return [(self.html(node), "table")]
        raise AssertionError(f"not a block tag: {tag}")

    def list_block(self, node: _Node, *, previous: str) -> list[tuple[str, str]]:
        items = [child for child in node.children if isinstance(child, _Node) or child.strip()]
        if not items:
            return []
        ordered = node.tag == "ol"
        # Two lists in a row with the same marker would merge into one.
        kind = ("ol" if ordered else "ul") + ("2" if previous == ("ol" if ordered else "ul") else "")
        bodies = []
        loose = False
        for item in items:
            inner = self.blocks_and_kinds(item.children if isinstance(item, _Node) and item.tag == "li" else [item])
            # A paragraph followed only by lists is a tight item ("two" and its sublist).
            tight = all(kind.startswith(("ul", "ol")) for _, kind in inner[1:])
            loose = loose or not tight
            bodies.append([block for block, _ in inner])
        rendered = []
        for number, body in enumerate(bodies, start=1):
            marker = (f"{number}{')' if kind.endswith('2') else '.'}" if ordered else ("*" if kind.endswith("2") else "-"))
            text = _indent(("\n\n" if loose else "\n").join(body), len(marker) + 1).lstrip(" ")
            rendered.append(f"{marker} {text}".rstrip(" "))
        return [(("\n\n" if loose else "\n").join(rendered), kind)]

    def html(self, node: "_Node | str") -> str:
        """A sanitized subtree written back as HTML on one line (tables)."""
        if isinstance(node, str):
            return html.escape(_collapse(node), quote=False)
        if node.tag == "img":
            self.image(node)
            return ""
        if node.tag == "a":
            self.link_target(node.attrs.get("href", ""))
        if node.tag == "pre":
            inner = html.escape(_text_content(node), quote=False).replace("\n", "&#10;")
        else:
            inner = "".join(self.html(child) for child in node.children)
        attributes = "".join(f' {name}="{html.escape(value)}"' for name, value in sorted(node.attrs.items()))
        if node.tag in _VOID_TAGS:
            return f"<{node.tag}{attributes}>"
        return f"<{node.tag}{attributes}>{inner}</{node.tag}>"

    # Inline -----------------------------------------------------------------------------

    def flat(self, nodes: list) -> str:
        """Blocks as one run of inline Markdown: a hard line break between them."""
        pieces: list[str] = []
        run: list = []

        def flush() -> None:
            piece = _trim_breaks(self.inline(run))
            run.clear()
            if piece:
                pieces.append(piece)

        for node in nodes:
            if isinstance(node, _Node) and node.tag in _BLOCK_TAGS:
                flush()
                if node.tag == "table":
                    pieces.append(self.html(node))
                elif node.tag == "pre":
                    pieces.append(self.code(_text_content(node)))
                elif node.tag != "hr":
                    piece = self.flat(node.children)
                    if piece:
                        pieces.append(piece)
            else:
                run.append(node)
        flush()
        return "\\\n".join(pieces)

    def inline(self, nodes: list) -> str:
        out: list[str] = []
        after_image = False
        for node in nodes:
            if isinstance(node, str):
                text = _collapse(node)
                if after_image and "".join(out).endswith((" ", "\xa0", "\n")):
                    # "Moodle <img> is": the image goes, and so does one of its spaces.
                    text = text.lstrip(" ")
                out.append(_escape(text))
                after_image = False
                continue
            after_image = False
            tag = node.tag
            if tag == "br":
                out.append("\\\n")
            elif tag in ("em", "i"):
                out.append(self.emphasis(node, marker="*", tag="em", before="".join(out)))
            elif tag in ("strong", "b"):
                out.append(self.emphasis(node, marker="**", tag="strong", before="".join(out)))
            elif tag in _RAW_INLINE:
                inner = self.inline(node.children)
                out.append(f"<{tag}>{inner}</{tag}>" if inner.strip() else inner)
            elif tag == "code":
                if "".join(out).endswith("`"):
                    # Backticks right after a code span would lengthen its fence.
                    text = _collapse(_text_content(node))
                    out.append(f"<code>{_escape(text)}</code>" if text else "")
                else:
                    out.append(self.code(_text_content(node)))
            elif tag == "a":
                out.append(self.link(node))
            elif tag == "img":
                out.append(self.image(node))
                after_image = True
            elif tag in _BLOCK_TAGS:
                # A block inside inline content (the sanitizer keeps few): its text, inline.
                out.append(" " + self.flat(node.children) + " ")
            else:
                out.append(self.inline(node.children))
        return "".join(out)

    def emphasis(self, node: _Node, *, marker: str, tag: str, before: str) -> str:
        inner = self.inline(node.children)
        core = inner.strip(" ")
        if not core:
            return inner
        lead, trail = inner[: len(inner) - len(inner.lstrip(" "))], inner[len(inner.rstrip(" ")):]
        # *x* is emphasis only where the delimiters touch letters or digits; elsewhere the
        # HTML tag says the same without CommonMark's flanking rules.
        plain = core[0].isalnum() and core[-1].isalnum() and not before.endswith("*")
        return lead + (f"{marker}{core}{marker}" if plain else f"<{tag}>{core}</{tag}>") + trail

    def code(self, text: str) -> str:
        text = _collapse(text)
        if not text:
            return ""
        runs = [len(run) for run in re.findall(r"`+", text)]
        fence = "`" * (max(runs, default=0) + 1)
        pad = " " if text[0] == "`" or text[-1] == "`" or (text[0] == " " and text[-1] == " " and text.strip()) else ""
        return f"{fence}{pad}{text}{pad}{fence}"

    def link(self, node: _Node) -> str:
        href = node.attrs.get("href", "")
        self.link_target(href)
        inner = self.inline(node.children)
        if not href or not inner.strip():
            # A link with no text shows nothing; one with no address is only its text.
            return inner
        title = node.attrs.get("title", "")
        title_part = ' "' + title.replace("\\", "\\\\").replace('"', '\\"') + '"' if title else ""
        return f"[{inner}]({_destination(href)}{title_part})"

    def link_target(self, href: str) -> None:
        if href.startswith(PLUGINFILE):
            self.converted.linked_files.append(unquote(href[len(PLUGINFILE):]))

    def image(self, node: _Node) -> str:
        src, alt = node.attrs.get("src", ""), node.attrs.get("alt", "")
        if src.startswith(PLUGINFILE):
            self.converted.images.append((alt, unquote(src[len(PLUGINFILE):])))
        else:
            self.converted.problems.append(
                f"it shows an image the file does not embed ({src or 'no address'}): certprep shows only embedded images"
            )
        # Images move to the exhibit (or are refused): nothing stays in the text.
        return ""


def _destination(href: str) -> str:
    href = href.replace("\\", "\\\\").replace("&", "\\&")
    if any(char in href for char in " <>()"):
        return "<" + href.replace("<", "%3C").replace(">", "%3E") + ">"
    return href
