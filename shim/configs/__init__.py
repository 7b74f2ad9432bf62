"""Kafka 3.9's topic and broker configs: the catalogue, their layers, validation and description."""
