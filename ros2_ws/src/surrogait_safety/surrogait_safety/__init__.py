"""The safety monitor node and its fault-injection tools."""
