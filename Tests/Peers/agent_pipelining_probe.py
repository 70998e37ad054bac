#!/usr/bin/env python3
"""Sends fifty token requests on one agent connection without reading an answer, and prints
whether the agent answered "one request at a time" (the agent test of pipelining). Each request
names another account nobody signed in as: nothing is held or remembered for it, so each one
needs a fetch from the store, and the first is still under way when the next arrives."""
import socket, sys

s = socket.socket(socket.AF_UNIX)
s.settimeout(10)
s.connect(sys.argv[1])
requests = b"".join(
    b'{"v":1,"op":"token","group":"' + sys.argv[2].encode() + b'","account":"nobody' + str(i).encode() + b'@example.invalid"}\n'
    for i in range(50)
)
s.sendall(requests)
data = b""
try:
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
except socket.timeout:
    pass
print("one request at a time" in data.decode())
