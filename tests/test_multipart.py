"""The multipart gate's rule (config.hostile): what browsers and clients send passes, a broken body is named."""
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test.client import BOUNDARY, encode_multipart

from config.hostile import multipart_flaw

PART = b'Content-Disposition: form-data; name="choice"\r\n\r\n2'


def test_what_the_test_client_and_browsers_send_is_well_formed():
    assert multipart_flaw(encode_multipart(BOUNDARY, {}), BOUNDARY) is None
    upload = SimpleUploadedFile("bank.gift", b"::T:: Q {=a ~b}\r\n\r\n--not-the-boundary")
    assert multipart_flaw(encode_multipart(BOUNDARY, {"choice": ["1", "2"], "file": upload}), BOUNDARY) is None
    # A browser's boundary, transport padding after a delimiter, a preamble and an epilogue (RFC 2046).
    browser = "----WebKitFormBoundary7MA4YWxkTrZu0gW"
    body = f"--{browser}  \r\n".encode() + PART + f"\r\n--{browser}--\r\n".encode()
    assert multipart_flaw(body, browser) is None
    assert multipart_flaw(b"preamble\r\n--x\r\n" + PART + b"\r\n--x--\r\nepilogue", "x") is None


@pytest.mark.parametrize(
    ("body", "boundary", "words"),
    [
        (b"--x\r\n" + PART + b"\r\n--x--\r\n", None, "no boundary"),
        (b"--x\r\n" + PART + b"\r\n--x--\r\n", "é", "not ASCII"),
        (b"--x\r\n" + PART + b"\r\n--x--\r\n", "x" * 71, "not a valid one"),
        (b"", "x", "no part"),
        (b"choice=2", "x", "no part"),
        (b"--y\r\n" + PART + b"\r\n--y--\r\n", "x", "no part"),
        (b"--x\r\n" + PART, "x", "ends before its closing boundary"),
        (b"--x\r\n" + PART + b"\r\n--x\r\n", "x", "ends before its closing boundary"),
        (b"--x\r\nContent-Disposition: form-da", "x", "ends before its closing boundary"),
        (b"--xy\r\n" + PART + b"\r\n--x--\r\n", "x", "part 1: its delimiter line"),
        (b"--x\r\n\r\n2\r\n--x--\r\n", "x", "part 1: it has no headers"),
        (b'--x\r\nContent-Disposition: form-data; name="a"\r\n--x--\r\n', "x", "part 1: its headers never end"),
        (b"--x\r\nnot a header\r\n\r\n2\r\n--x--\r\n", "x", "part 1: a header line"),
        (b"--x\r\n" + PART + b"\r\n--x\r\nContent-Type: text/plain\r\n\r\n2\r\n--x--\r\n", "x",
         "part 2: it needs exactly one Content-Disposition"),
        (b"--x\r\nContent-Disposition: form-data\r\n\r\n2\r\n--x--\r\n", "x", "part 1: its Content-Disposition"),
        (b'--x\r\nContent-Disposition: attachment; name="a"\r\n\r\n2\r\n--x--\r\n', "x", "part 1: its Content-Disposition"),
        (b"--x\r\n" + b"Content-Disposition: form-data; name=\"b\"\r\n" + PART + b"\r\n--x--\r\n", "x", "exactly one"),
    ],
)
def test_a_broken_body_is_named(body, boundary, words):
    assert words in multipart_flaw(body, boundary)
