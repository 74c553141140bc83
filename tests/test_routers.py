"""The replica router: statistics reads go to the replica when one is configured; nothing else does."""
from django.test import override_settings

from config.routers import StatisticsReplicaRouter, statistics_reads
from exams.models import Attempt, Question

REPLICA = {"default": {}, "replica": {}}


def test_without_a_replica_everything_stays_on_the_primary():
    router = StatisticsReplicaRouter()
    with statistics_reads():
        assert router.db_for_read(Question) is None
    assert router.db_for_write(Attempt) == "default"


@override_settings(DATABASES=REPLICA)
def test_statistics_reads_go_to_the_replica_and_only_they():
    router = StatisticsReplicaRouter()
    assert router.db_for_read(Attempt) is None
    with statistics_reads():
        assert router.db_for_read(Attempt) == "replica"
        assert router.db_for_write(Attempt) == "default"
    assert router.db_for_read(Attempt) is None
    assert router.allow_migrate("replica", "exams") is False
