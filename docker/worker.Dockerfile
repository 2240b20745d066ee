# Muninn worker image: the same build as the server, started with --role worker (no HTTP port).
FROM muninn-server:latest
CMD ["serve", "--role", "worker"]
