"""The bundled models, written with torch.nn (torchvision does not work with the CPU torch CI
installs). Architectures follow torchvision's and the source studies' so parameter counts and
FLOPs match the published ones; weights are random, nothing is downloaded."""
