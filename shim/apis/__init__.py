"""One module per Kafka API, named by API key; importing them fills the registry."""

from . import (  # noqa: F401  (registration side effects)
    k00_produce,
    k01_fetch,
    k02_list_offsets,
    k03_metadata,
    k08_offset_commit,
    k09_offset_fetch,
    k10_find_coordinator,
    k11_join_group,
    k12_heartbeat,
    k13_leave_group,
    k14_sync_group,
    k15_describe_groups,
    k16_list_groups,
    k18_api_versions,
    k19_create_topics,
    k20_delete_topics,
    k21_delete_records,
    k22_init_producer_id,
    k23_offset_for_leader_epoch,
    k24_add_partitions_to_txn,
    k25_add_offsets_to_txn,
    k26_end_txn,
    k27_write_txn_markers,
    k28_txn_offset_commit,
    k32_describe_configs,
    k42_delete_groups,
    k47_offset_delete,
    k60_describe_cluster,
    k61_describe_producers,
    k65_describe_transactions,
    k66_list_transactions,
)
from .registry import REGISTRY

__all__ = ["REGISTRY"]
