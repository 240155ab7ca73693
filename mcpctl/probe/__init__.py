"""Talking to servers: spawn or connect, probe their health, list and call their tools."""
