"""The connection pool's check before lending a connection: a round trip only when it may be dead."""
import select

from psycopg import pq
from psycopg_pool import ConnectionPool


def check_connection(conn) -> None:
    """Raise if a pooled connection is dead, so the pool replaces it; cost no round trip if not.

    An idle connection has nothing to read: the server speaks first only to end it (a
    restart or `pg_terminate_backend` sends a FATAL error and closes the socket; a crashed
    server leaves the socket at end of file). So a poll of the socket with no wait tells a
    live idle connection from one the server has left, and only then does the pool's own
    check (an empty query) run, to read what came and raise. psycopg_pool's default check
    costs every request a round trip; this costs a system call.
    """
    if conn.closed or conn.pgconn.status != pq.ConnStatus.OK or conn.info.transaction_status != pq.TransactionStatus.IDLE:
        ConnectionPool.check_connection(conn)
        return
    readable, _, _ = select.select([conn.fileno()], [], [], 0)
    if readable:
        ConnectionPool.check_connection(conn)
