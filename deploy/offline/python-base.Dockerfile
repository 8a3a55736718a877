# A stand-in for python:3.11-slim-bookworm, built from Debian packages, for machines that cannot
# pull images (scripts/test_containers.sh). Its python3.11 is /usr/bin/python3.11, not
# /usr/local/bin: the service Dockerfiles use one base for both stages, so the venv still matches.
ARG DEBIAN_IMAGE=localhost/quarry-debian-minbase:bookworm
FROM ${DEBIAN_IMAGE}
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3.11 ca-certificates \
 && apt-get clean && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin \
 && ln -s python3.11 /usr/bin/python3
# Debian's python3.11 package has no python3 command (python3-minimal adds it, and more); the
# official image has one, and the script's preflight and the compose stand-ins run python3.
ENV LANG=C.UTF-8
CMD ["python3.11"]
