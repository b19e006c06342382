"""Decode the base64 fields of a KIP-590 ``EnvelopeRequest`` as the request log prints them.

The request log writes ``bytes`` fields as base64 (``JsonConverterGenerator``). Bronze redacts
``requestData`` / ``responseData`` (they carry the forwarded request, possibly a token HMAC) but
keeps ``requestPrincipal`` and ``clientHostAddress``, which name who sent the forwarded request
and from where (``EnvelopeRequest.json`` v0, ``EnvelopeUtils.scala``):

* ``requestPrincipal``: ``DefaultPrincipalData`` v0 (``DefaultPrincipalData.json``, flexible):
  int16 version, compact string type, compact string name, bool tokenAuthenticated, tagged
  fields. A compact string is an unsigned varint of length + 1, then UTF-8 bytes.
* ``clientHostAddress``: ``InetAddress.getAddress()`` of the client, 4 or 16 raw bytes.
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

#: Compact-string lengths decoded: a 1-byte varint for the type (``User``, ``Group``...), up
#: to a 2-byte varint for the name (names up to 16382 bytes, e.g. long certificate DNs).
_ONE_BYTE_VARINT = 128


def _binary(base64_text: Column) -> Column:
    """base64 text -> binary; null for null or invalid base64."""
    return F.try_to_binary(base64_text, F.lit("base64"))


def _byte(data: Column, position: Column) -> Column:
    """Unsigned byte at 1-based ``position`` of binary ``data``; null past the end."""
    return F.conv(F.hex(data.substr(position, F.lit(1))), 16, 10).try_cast("int")


def _text(data: Column, start: Column, length: Column) -> Column:
    """UTF-8 text of ``length`` bytes at ``start``; null when cut or negative."""
    whole = (length >= 0) & (start + length - 1 <= F.length(data))
    return F.when(whole, F.decode(data.substr(start, length), "UTF-8"))


def decoded_principal(request_principal: Column) -> Column:
    """Decode an envelope's base64 ``requestPrincipal`` (``DefaultPrincipalData`` v0).

    Args:
        request_principal: base64 string.

    Returns:
        ``struct<principal: string, token_authenticated: boolean>``: ``<type>:<name>`` as
        ``KafkaPrincipal.toString`` prints it, and the tokenAuthenticated flag (true when the
        forwarding broker authenticated the client with a delegation token). Null for null,
        invalid base64, another version, a type longer than 126 bytes, a name longer than
        16382 bytes, or bytes that do not decode completely (the struct, not its fields).
    """
    data = _binary(request_principal)
    version = F.hex(data.substr(F.lit(1), F.lit(2)))
    type_varint = _byte(data, F.lit(3))  # length + 1, one byte
    type_length = type_varint - 1
    name_at = type_varint + 3  # 4 + type_length
    b0, b1 = _byte(data, name_at), _byte(data, name_at + 1)
    name_varint = F.when(b0 < _ONE_BYTE_VARINT, b0).when(
        b1 < _ONE_BYTE_VARINT, b0 - _ONE_BYTE_VARINT + b1 * _ONE_BYTE_VARINT
    )
    name_start = name_at + F.when(b0 < _ONE_BYTE_VARINT, 1).otherwise(2)
    flag_at = name_start + name_varint - 1
    principal_type = _text(data, F.lit(4), type_length)
    principal_name = _text(data, name_start, name_varint - 1)
    flag = _byte(data, flag_at)
    valid = (
        (version == "0000")
        & (type_varint < _ONE_BYTE_VARINT)
        & principal_type.isNotNull()
        & principal_name.isNotNull()
        & flag.isin(0, 1)
        & (F.length(data) > flag_at)  # the tagged-fields count follows
    )
    value = F.struct(
        F.concat(principal_type, F.lit(":"), principal_name).alias("principal"),
        (flag == 1).alias("token_authenticated"),
    )
    return F.when(valid, value)


def envelope_principal(request_principal: Column) -> Column:
    """KafkaPrincipal string (``User:ANONYMOUS``) of a base64 ``requestPrincipal``; null as
    for ``decoded_principal``. To read the flag too, materialise ``decoded_principal`` once."""
    return decoded_principal(request_principal)["principal"]


def envelope_client_address(client_host_address: Column) -> Column:
    """Client IP text of an envelope's base64 ``clientHostAddress``.

    Args:
        client_host_address: base64 string of 4 (IPv4) or 16 (IPv6) raw address bytes.

    Returns:
        string Column as ``InetAddress.getHostAddress`` prints it: dotted quad for 4 bytes and
        for IPv4-mapped IPv6 (``getByAddress`` returns an Inet4Address for those); for other
        16-byte addresses eight lower-case hex groups without leading zeros and without ``::``
        compression (``0:0:0:0:0:0:0:1``). Null for null, invalid base64 or another length.
    """
    data = _binary(client_host_address)
    size = F.length(data)

    def dotted(first: int) -> Column:
        octets = [_byte(data, F.lit(first + i)).cast("string") for i in range(4)]
        return F.concat_ws(".", *octets)

    groups = [
        F.lower(F.conv(F.hex(data.substr(F.lit(2 * i + 1), F.lit(2))), 16, 16)) for i in range(8)
    ]
    mapped = F.hex(data.substr(F.lit(1), F.lit(12))) == F.lit("00000000000000000000FFFF")
    return (
        F.when(size == 4, dotted(1))
        .when((size == 16) & mapped, dotted(13))
        .when(size == 16, F.concat_ws(":", *groups))
    )
