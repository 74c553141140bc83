"""The client address a login is counted against (django-axes' AXES_CLIENT_IP_CALLABLE).

Behind a proxy every request comes from the proxy's address, so counting failures by
REMOTE_ADDR alone let five wrong passwords from anywhere lock any username out for
everyone (issue 28). Reading X-Forwarded-For blindly would be worse: a client sends that
header itself and could pick a new address for every try. So the header is read only when
the request came from a proxy the operator listed (TRUSTED_PROXIES, addresses or CIDRs),
and from the right: each trusted proxy appends the address it saw, so the right-most entry
that is not itself a trusted proxy is the client as the outermost trusted proxy saw it.
Entries to its left were written by the client and are never read. An IPv6 client is keyed
by its /64, which one subscriber usually holds whole.
"""
import ipaddress
from functools import lru_cache

from django.conf import settings

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


@lru_cache(maxsize=8)
def trusted_networks(entries: tuple[str, ...]) -> tuple[IPNetwork, ...]:
    """The networks of TRUSTED_PROXIES (validated at start-up in config/settings.py)."""
    return tuple(ipaddress.ip_network(entry, strict=False) for entry in entries)


def parse_address(text: str) -> IPAddress | None:
    """An address as a proxy writes it, or None: bare, bracketed IPv6 ("[2001:db8::1]"), or
    with a port as some balancers append it ("203.0.113.7:5678", "[2001:db8::1]:5678")."""
    text = text.strip()
    if text.startswith("[") and "]" in text:
        text, _, port = text[1:].partition("]")
        if port and not (port.startswith(":") and port[1:].isdigit()):
            return None
    elif text.count(":") == 1:
        text, _, port = text.partition(":")
        if not port.isdigit():
            return None
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def client_key(address: IPAddress) -> str:
    """What a lockout is keyed on: an IPv4 address as it is, an IPv6 one by its /64's first address."""
    if isinstance(address, ipaddress.IPv6Address):
        return str(ipaddress.IPv6Network((address, 64), strict=False).network_address)
    return str(address)


def client_address(request) -> str | None:
    """The address django-axes counts a login against (see the module's docstring)."""
    remote = request.META.get("REMOTE_ADDR", "")
    address = parse_address(remote)
    if address is None:
        return remote or None
    trusted = trusted_networks(tuple(settings.TRUSTED_PROXIES))
    if _is_trusted(address, trusted):
        for entry in reversed(request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")):
            hop = parse_address(entry)
            if hop is None:
                break  # a trusted proxy wrote something unreadable: keep the last hop known
            address = hop
            if not _is_trusted(hop, trusted):
                break
    return client_key(address)


def _is_trusted(address: IPAddress, trusted: tuple[IPNetwork, ...]) -> bool:
    return any(address.version == network.version and address in network for network in trusted)
