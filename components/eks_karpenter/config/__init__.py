"""The config machinery the components share: model base, errors, stack-file reading and validation."""
