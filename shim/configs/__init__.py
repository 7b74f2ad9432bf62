"""Kafka's topic and broker configs (3.9's, and the changes of 4.0 and 4.1): the catalogue, their layers,
validation and description."""
