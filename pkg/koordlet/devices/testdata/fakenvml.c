// A stand-in for the NVIDIA driver's libnvidia-ml.so.1, compiled against go-nvml's nvml.h by TestNVMLLibrary:
// two GPUs, the second of which cannot tell its memory. It answers only the calls koordlet makes. (go-nvml's
// nvml.h makes nvmlDevice_t a structure holding the handle.)
#include <stdio.h>
#include <string.h>

#include "nvml.h"

struct nvmlDevice_st {
	unsigned int minor;
	const char *uuid;
	const char *name;
	unsigned long long memory;
	const char *busId;
};

static struct nvmlDevice_st gpus[] = {
	{0, "GPU-0a1b2c3d-0000-0000-0000-000000000000", "NVIDIA A100-SXM4-80GB", 85899345920ULL, "00000000:3B:00.0"},
	{3, "GPU-0a1b2c3d-0000-0000-0000-000000000003", "NVIDIA A100-SXM4-80GB", 0, "00000000:86:00.0"},
};

static int initialised;

nvmlReturn_t nvmlInit_v2(void) { initialised = 1; return NVML_SUCCESS; }

nvmlReturn_t nvmlShutdown(void) { initialised = 0; return NVML_SUCCESS; }

const char *nvmlErrorString(nvmlReturn_t r) { return r == NVML_ERROR_NOT_SUPPORTED ? "Not Supported" : "Unknown Error"; }

static nvmlReturn_t copy(char *dst, unsigned int length, const char *src) {
	if (strlen(src) >= length) return NVML_ERROR_INSUFFICIENT_SIZE;
	strcpy(dst, src);
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length) {
	if (!initialised) return NVML_ERROR_UNINITIALIZED;
	return copy(version, length, "550.54.15");
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count) {
	if (!initialised) return NVML_ERROR_UNINITIALIZED;
	*count = sizeof(gpus) / sizeof(gpus[0]);
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device) {
	if (!initialised) return NVML_ERROR_UNINITIALIZED;
	if (index >= sizeof(gpus) / sizeof(gpus[0])) return NVML_ERROR_INVALID_ARGUMENT;
	device->handle = &gpus[index];
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char *uuid, unsigned int length) { return copy(uuid, length, d.handle->uuid); }

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char *name, unsigned int length) { return copy(name, length, d.handle->name); }

nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t d, unsigned int *minor) {
	*minor = d.handle->minor;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t *memory) {
	if (d.handle->memory == 0) return NVML_ERROR_NOT_SUPPORTED;
	memory->total = d.handle->memory;
	memory->free = d.handle->memory;
	memory->used = 0;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t *pci) {
	memset(pci, 0, sizeof(*pci));
	snprintf(pci->busId, sizeof(pci->busId), "%s", d.handle->busId);
	return NVML_SUCCESS;
}
