"""The durable log: synchronous, knows nothing of the wire.

Kafka's map: LogSegment (.log/.index/.timeindex/.txnindex), PartitionLog (UnifiedLog),
ProducerStateManager, recovery at load.
"""
