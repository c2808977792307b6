#ifndef _GNU_SOURCE
#define _GNU_SOURCE // RTLD_NODELETE, RTLD_NOLOAD, dl_iterate_phdr
#endif
#include "shim.h"

#include <dlfcn.h>
#include <link.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "_cgo_export.h"

void *vkops_load(char *err) {
	// The versioned name: the unversioned libvulkan.so belongs to the -dev
	// package and is missing on machines that only run Vulkan programs.
	void *lib = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		snprintf(err, 256, "%s", dlerror());
		return NULL;
	}
	void *f = dlsym(lib, "vkGetInstanceProcAddr");
	if (!f) {
		snprintf(err, 256, "libvulkan.so.1 has no vkGetInstanceProcAddr");
	}
	return f;
}

// pinned collects the names of the loaded objects: dlopen may not be
// called from inside dl_iterate_phdr's callback.
struct pinned {
	char *names[512];
	int n;
};

static int collect(struct dl_phdr_info *info, size_t size, void *data) {
	struct pinned *p = data;
	(void)size;
	if (info->dlpi_name && info->dlpi_name[0] && p->n < 512) {
		p->names[p->n++] = strdup(info->dlpi_name);
	}
	return 0;
}

void vkops_pin_loaded(void) {
	struct pinned p = {.n = 0};
	dl_iterate_phdr(collect, &p);
	for (int i = 0; i < p.n; i++) {
		// NOLOAD only finds an object already there; NODELETE stays with it
		// after the dlclose that balances this dlopen.
		void *h = p.names[i] ? dlopen(p.names[i], RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE) : NULL;
		if (h) {
			dlclose(h);
		}
		free(p.names[i]);
	}
}

void vkops_query_props2(void *gipa, VkInstance inst, VkPhysicalDevice pd, uint32_t api_version, int host_import,
	vkops_props2 *out) {
	memset(out, 0, sizeof *out);
	if (VK_API_VERSION_MINOR(api_version) < 1 && VK_API_VERSION_MAJOR(api_version) == 1) {
		return;
	}
	PFN_vkGetInstanceProcAddr get = (PFN_vkGetInstanceProcAddr)gipa;
	PFN_vkGetPhysicalDeviceProperties2 props2 =
		(PFN_vkGetPhysicalDeviceProperties2)get(inst, "vkGetPhysicalDeviceProperties2");
	PFN_vkGetPhysicalDeviceFeatures2 feats2 =
		(PFN_vkGetPhysicalDeviceFeatures2)get(inst, "vkGetPhysicalDeviceFeatures2");
	if (!props2 || !feats2) {
		return;
	}
	out->has_props2 = 1;

	VkPhysicalDeviceDriverProperties driver = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
	VkPhysicalDeviceSubgroupProperties sub = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
	VkPhysicalDeviceIDProperties id = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
	VkPhysicalDeviceMaintenance3Properties m3 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES};
	VkPhysicalDeviceProperties2 p = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
	p.pNext = &sub;
	sub.pNext = &id;
	id.pNext = &m3;
	// Driver properties are core only from 1.2.
	if (VK_API_VERSION_MINOR(api_version) >= 2 || VK_API_VERSION_MAJOR(api_version) > 1) {
		m3.pNext = &driver;
	}
	VkPhysicalDeviceExternalMemoryHostPropertiesEXT host = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_MEMORY_HOST_PROPERTIES_EXT};
	if (host_import) {
		host.pNext = p.pNext;
		p.pNext = &host;
	}
	props2(pd, &p);
	out->min_imported_host_pointer_alignment = host.minImportedHostPointerAlignment;
	out->driver_id = driver.driverID;
	memcpy(out->driver_name, driver.driverName, sizeof out->driver_name);
	memcpy(out->driver_info, driver.driverInfo, sizeof out->driver_info);
	memcpy(out->device_uuid, id.deviceUUID, VK_UUID_SIZE);
	memcpy(out->driver_uuid, id.driverUUID, VK_UUID_SIZE);
	out->max_memory_allocation_size = m3.maxMemoryAllocationSize;
	out->subgroup_size = sub.subgroupSize;
	out->subgroup_stages = sub.supportedStages;
	out->subgroup_ops = sub.supportedOperations;

	VkPhysicalDevice8BitStorageFeatures s8 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES};
	VkPhysicalDevice16BitStorageFeatures s16 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
	VkPhysicalDeviceShaderFloat16Int8Features f16 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES};
	VkPhysicalDeviceFeatures2 f = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
	f.pNext = &s16;
	if (VK_API_VERSION_MINOR(api_version) >= 2 || VK_API_VERSION_MAJOR(api_version) > 1) {
		s16.pNext = &s8;
		s8.pNext = &f16;
	}
	feats2(pd, &f);
	out->storage_buffer_8bit = s8.storageBuffer8BitAccess;
	out->storage_buffer_16bit = s16.storageBuffer16BitAccess;
	out->shader_float16 = f16.shaderFloat16;
	out->shader_int8 = f16.shaderInt8;
}

// The binding's versions of the next two calls hand the driver C arrays
// that a finalizer may free while the call still writes them (a finalizer
// on a variable that is dead once the array is made): the loader then
// writes layer names into freed heap memory. These keep the arrays in C
// for the whole call.
int vkops_has_instance_layer(void *gipa, const char *name) {
	PFN_vkEnumerateInstanceLayerProperties enumerate = (PFN_vkEnumerateInstanceLayerProperties)(
		(PFN_vkGetInstanceProcAddr)gipa)(NULL, "vkEnumerateInstanceLayerProperties");
	uint32_t n = 0;
	if (!enumerate || enumerate(&n, NULL) != VK_SUCCESS || n == 0) {
		return 0;
	}
	VkLayerProperties *props = calloc(n, sizeof *props);
	if (!props) {
		return 0;
	}
	int found = 0;
	if (enumerate(&n, props) == VK_SUCCESS) {
		for (uint32_t i = 0; i < n && !found; i++) {
			found = strcmp(props[i].layerName, name) == 0;
		}
	}
	free(props);
	return found;
}

uint32_t vkops_queue_flags(void *gipa, VkInstance inst, VkPhysicalDevice pd, uint32_t *flags, uint32_t max) {
	PFN_vkGetPhysicalDeviceQueueFamilyProperties get = (PFN_vkGetPhysicalDeviceQueueFamilyProperties)(
		(PFN_vkGetInstanceProcAddr)gipa)(inst, "vkGetPhysicalDeviceQueueFamilyProperties");
	uint32_t n = 0;
	if (!get) {
		return 0;
	}
	get(pd, &n, NULL);
	VkQueueFamilyProperties *qs = calloc(n ? n : 1, sizeof *qs);
	if (!qs) {
		return 0;
	}
	get(pd, &n, qs);
	for (uint32_t i = 0; i < n && i < max; i++) {
		flags[i] = qs[i].queueFlags;
	}
	free(qs);
	return n;
}

int vkops_has_device_ext(void *gipa, VkInstance inst, VkPhysicalDevice pd, const char *name) {
	PFN_vkEnumerateDeviceExtensionProperties enumerate = (PFN_vkEnumerateDeviceExtensionProperties)(
		(PFN_vkGetInstanceProcAddr)gipa)(inst, "vkEnumerateDeviceExtensionProperties");
	uint32_t n = 0;
	if (!enumerate || enumerate(pd, NULL, &n, NULL) != VK_SUCCESS || n == 0) {
		return 0;
	}
	VkExtensionProperties *props = calloc(n, sizeof *props);
	if (!props) {
		return 0;
	}
	int found = 0;
	if (enumerate(pd, NULL, &n, props) >= 0) { // VK_INCOMPLETE still lists n of them
		for (uint32_t i = 0; i < n && !found; i++) {
			found = strcmp(props[i].extensionName, name) == 0;
		}
	}
	free(props);
	return found;
}

static VKAPI_ATTR VkBool32 VKAPI_CALL messenger_cb(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
	VkDebugUtilsMessageTypeFlagsEXT types, const VkDebugUtilsMessengerCallbackDataEXT *data, void *user) {
	(void)types;
	vkopsGoDebugMessage((uintptr_t)user, (int)severity, (char *)(data && data->pMessage ? data->pMessage : ""));
	return VK_FALSE;
}

VkResult vkops_create_messenger(void *gipa, VkInstance inst, uintptr_t handle, VkDebugUtilsMessengerEXT *out) {
	PFN_vkCreateDebugUtilsMessengerEXT create = (PFN_vkCreateDebugUtilsMessengerEXT)(
		(PFN_vkGetInstanceProcAddr)gipa)(inst, "vkCreateDebugUtilsMessengerEXT");
	if (!create) {
		return VK_ERROR_EXTENSION_NOT_PRESENT;
	}
	VkDebugUtilsMessengerCreateInfoEXT ci = {.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
	ci.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
	ci.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
		VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
	ci.pfnUserCallback = messenger_cb;
	ci.pUserData = (void *)handle;
	return create(inst, &ci, NULL, out);
}

void vkops_destroy_messenger(void *gipa, VkInstance inst, VkDebugUtilsMessengerEXT m) {
	PFN_vkDestroyDebugUtilsMessengerEXT destroy = (PFN_vkDestroyDebugUtilsMessengerEXT)(
		(PFN_vkGetInstanceProcAddr)gipa)(inst, "vkDestroyDebugUtilsMessengerEXT");
	if (destroy) {
		destroy(inst, m, NULL);
	}
}

int vkops_load_device_fns(void *gipa, VkInstance inst, VkDevice dev, int push_desc, int host_import, vkops_device_fns *f) {
	PFN_vkGetDeviceProcAddr gdpa = (PFN_vkGetDeviceProcAddr)((PFN_vkGetInstanceProcAddr)gipa)(inst, "vkGetDeviceProcAddr");
	if (!gdpa) {
		return 0;
	}
#define LOAD(field, name)                                     \
	f->field = (PFN_##name)gdpa(dev, #name);              \
	if (!f->field) {                                      \
		return 0;                                     \
	}
	LOAD(update_descriptor_sets, vkUpdateDescriptorSets)
	LOAD(bind_pipeline, vkCmdBindPipeline)
	LOAD(bind_descriptor_sets, vkCmdBindDescriptorSets)
	LOAD(push_constants, vkCmdPushConstants)
	LOAD(dispatch, vkCmdDispatch)
	LOAD(pipeline_barrier, vkCmdPipelineBarrier)
	LOAD(copy_buffer, vkCmdCopyBuffer)
	LOAD(fill_buffer, vkCmdFillBuffer)
	LOAD(queue_submit, vkQueueSubmit)
	LOAD(create_compute_pipelines, vkCreateComputePipelines)
	LOAD(write_timestamp, vkCmdWriteTimestamp)
	LOAD(reset_query_pool, vkCmdResetQueryPool)
	LOAD(allocate_descriptor_sets, vkAllocateDescriptorSets)
	LOAD(create_buffer, vkCreateBuffer)
	LOAD(destroy_buffer, vkDestroyBuffer)
	LOAD(buffer_requirements, vkGetBufferMemoryRequirements)
	LOAD(allocate_memory, vkAllocateMemory)
	LOAD(bind_buffer_memory, vkBindBufferMemory)
	LOAD(free_memory, vkFreeMemory)
	LOAD(begin_command_buffer, vkBeginCommandBuffer)
	LOAD(end_command_buffer, vkEndCommandBuffer)
	LOAD(reset_command_buffer, vkResetCommandBuffer)
	LOAD(wait_for_fences, vkWaitForFences)
	LOAD(get_fence_status, vkGetFenceStatus)
	LOAD(reset_fences, vkResetFences)
	LOAD(reset_descriptor_pool, vkResetDescriptorPool)
	f->push_descriptor_set = NULL;
	if (push_desc) {
		LOAD(push_descriptor_set, vkCmdPushDescriptorSetKHR)
	}
	f->host_pointer_props = NULL;
	if (host_import) {
		LOAD(host_pointer_props, vkGetMemoryHostPointerPropertiesEXT)
	}
#undef LOAD
	return 1;
}

// The structures that chain into the calls below live on the C stack for
// the call, so no Go memory is reachable from a pNext chain.
VkResult vkops_host_buffer(const vkops_device_fns *f, VkDevice dev, const void *ptr, VkDeviceSize size,
	VkBufferUsageFlags usage, VkBuffer *buf, uint32_t *types, VkDeviceSize *need) {
	VkMemoryHostPointerPropertiesEXT hp = {.sType = VK_STRUCTURE_TYPE_MEMORY_HOST_POINTER_PROPERTIES_EXT};
	VkResult r = f->host_pointer_props(dev, VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT, ptr, &hp);
	if (r != VK_SUCCESS) {
		return r;
	}
	VkExternalMemoryBufferCreateInfo ext = {.sType = VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO,
		.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT};
	VkBufferCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, .pNext = &ext, .size = size,
		.usage = usage, .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
	r = f->create_buffer(dev, &ci, NULL, buf);
	if (r != VK_SUCCESS) {
		return r;
	}
	VkMemoryRequirements req;
	f->buffer_requirements(dev, *buf, &req);
	*types = req.memoryTypeBits & hp.memoryTypeBits;
	*need = req.size;
	return VK_SUCCESS;
}

VkResult vkops_import_host(const vkops_device_fns *f, VkDevice dev, VkBuffer buf, void *ptr, VkDeviceSize size,
	uint32_t type_index, VkDeviceMemory *mem) {
	VkImportMemoryHostPointerInfoEXT imp = {.sType = VK_STRUCTURE_TYPE_IMPORT_MEMORY_HOST_POINTER_INFO_EXT,
		.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT, .pHostPointer = ptr};
	VkMemoryAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, .pNext = &imp,
		.allocationSize = size, .memoryTypeIndex = type_index};
	VkResult r = f->allocate_memory(dev, &ai, NULL, mem);
	if (r != VK_SUCCESS) {
		return r;
	}
	r = f->bind_buffer_memory(dev, buf, *mem, 0);
	if (r != VK_SUCCESS) {
		f->free_memory(dev, *mem, NULL);
		*mem = VK_NULL_HANDLE;
	}
	return r;
}

// The barrier between dependent commands: every earlier compute and
// transfer write made visible to every later compute, transfer and host
// access.
static void full_barrier(const vkops_device_fns *f, VkCommandBuffer cb) {
	VkPipelineStageFlags stages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
	VkMemoryBarrier b = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
		.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
		.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
			VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_HOST_READ_BIT};
	f->pipeline_barrier(cb, stages, stages | VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &b, 0, NULL, 0, NULL);
}

VkResult vkops_record(const vkops_device_fns *f, VkDevice dev, VkCommandBuffer cb, VkDescriptorPool pool,
	const vkops_pipe *p, const vkops_binding *binds, const void *push, uint32_t x, uint32_t y, uint32_t z, int barrier,
	int bind) {
	VkDescriptorSet set = VK_NULL_HANDLE;
	if (!p->push_desc) {
		VkDescriptorSetAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
			.descriptorPool = pool, .descriptorSetCount = 1, .pSetLayouts = &p->set_layout};
		VkResult r = f->allocate_descriptor_sets(dev, &ai, &set);
		if (r != VK_SUCCESS) {
			return r;
		}
	}
	VkWriteDescriptorSet w[VKOPS_MAX_BINDINGS];
	VkDescriptorBufferInfo bi[VKOPS_MAX_BINDINGS];
	uint32_t n = p->nbinds < VKOPS_MAX_BINDINGS ? p->nbinds : VKOPS_MAX_BINDINGS;
	for (uint32_t i = 0; i < n; i++) {
		w[i] = (VkWriteDescriptorSet){.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
		w[i].dstSet = set;
		w[i].dstBinding = i;
		w[i].descriptorCount = 1;
		w[i].descriptorType = p->types[i];
		if (p->types[i] == VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER || p->types[i] == VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER) {
			w[i].pTexelBufferView = &binds[i].view;
		} else {
			bi[i] = (VkDescriptorBufferInfo){binds[i].buffer, binds[i].offset, binds[i].rng};
			w[i].pBufferInfo = &bi[i];
		}
	}
	if (!p->push_desc) {
		f->update_descriptor_sets(dev, n, w, 0, NULL);
	}
	if (barrier) {
		full_barrier(f, cb);
	}
	if (bind) {
		f->bind_pipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, p->pipeline);
	}
	if (p->push_desc) {
		f->push_descriptor_set(cb, VK_PIPELINE_BIND_POINT_COMPUTE, p->layout, 0, n, w);
	} else {
		f->bind_descriptor_sets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, p->layout, 0, 1, &set, 0, NULL);
	}
	if (p->push_size > 0) {
		f->push_constants(cb, p->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, p->push_size, push);
	}
	f->dispatch(cb, x, y, z);
	return VK_SUCCESS;
}

VkResult vkops_record_n(const vkops_device_fns *f, VkDevice dev, VkCommandBuffer cb, VkDescriptorPool pool,
	const vkops_pipe *p, const vkops_binding *binds, const void *push, uint32_t x, uint32_t y, uint32_t z,
	uint32_t n, int barriers) {
	for (uint32_t i = 0; i < n; i++) {
		VkResult r = vkops_record(f, dev, cb, pool, p, binds, push, x, y, z, barriers && i > 0, 1);
		if (r != VK_SUCCESS) {
			return r;
		}
	}
	return VK_SUCCESS;
}

void vkops_barrier(const vkops_device_fns *f, VkCommandBuffer cb, VkPipelineStageFlags src_stage,
	VkAccessFlags src_access, VkPipelineStageFlags dst_stage, VkAccessFlags dst_access) {
	VkMemoryBarrier b = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = src_access, .dstAccessMask = dst_access};
	f->pipeline_barrier(cb, src_stage, dst_stage, 0, 1, &b, 0, NULL, 0, NULL);
}

VkResult vkops_submit(const vkops_device_fns *f, VkQueue q, VkCommandBuffer cb, VkFence fence) {
	VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &cb};
	return f->queue_submit(q, 1, &si, fence);
}

VkResult vkops_end(const vkops_device_fns *f, VkCommandBuffer cb) { return f->end_command_buffer(cb); }

VkResult vkops_begin(const vkops_device_fns *f, VkCommandBuffer cb) {
	VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
		.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
	return f->begin_command_buffer(cb, &bi);
}

VkResult vkops_wait(const vkops_device_fns *f, VkDevice dev, VkFence fence, uint64_t timeout) {
	if (timeout == 0) {
		return f->get_fence_status(dev, fence);
	}
	return f->wait_for_fences(dev, 1, &fence, VK_TRUE, timeout);
}

static uint64_t now_ns(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

VkResult vkops_poll(const vkops_device_fns *f, VkDevice dev, VkFence fence, uint64_t ns, int yield) {
	uint64_t end = now_ns() + ns;
	for (;;) {
		VkResult r = f->get_fence_status(dev, fence);
		if (r != VK_NOT_READY || now_ns() >= end) {
			return r;
		}
		if (yield) {
			sched_yield();
		}
	}
}

VkResult vkops_reset(const vkops_device_fns *f, VkDevice dev, VkFence fence, VkDescriptorPool pool, VkCommandBuffer cb) {
	VkResult r = f->reset_fences(dev, 1, &fence);
	if (r == VK_SUCCESS && pool != VK_NULL_HANDLE) {
		r = f->reset_descriptor_pool(dev, pool, 0);
	}
	if (r == VK_SUCCESS) {
		r = f->reset_command_buffer(cb, 0);
	}
	return r;
}

VkResult vkops_create_compute_pipeline(const vkops_device_fns *f, VkDevice dev, VkPipelineCache cache,
	VkShaderModule module, VkPipelineLayout layout, const uint32_t *spec, uint32_t nspec, VkPipeline *out) {
	VkSpecializationMapEntry entries[32];
	if (nspec > 32) {
		return VK_ERROR_INITIALIZATION_FAILED;
	}
	for (uint32_t i = 0; i < nspec; i++) {
		entries[i] = (VkSpecializationMapEntry){i, 4 * i, 4};
	}
	VkSpecializationInfo si = {nspec, entries, 4 * (size_t)nspec, spec};
	VkComputePipelineCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
	ci.stage = (VkPipelineShaderStageCreateInfo){.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
	ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
	ci.stage.module = module;
	ci.stage.pName = "main";
	ci.stage.pSpecializationInfo = nspec ? &si : NULL;
	ci.layout = layout;
	return f->create_compute_pipelines(dev, cache, 1, &ci, NULL, out);
}

void vkops_copy(const vkops_device_fns *f, VkCommandBuffer cb, VkBuffer src, VkDeviceSize src_off, VkBuffer dst,
	VkDeviceSize dst_off, VkDeviceSize size) {
	VkBufferCopy r = {src_off, dst_off, size};
	f->copy_buffer(cb, src, dst, 1, &r);
}

void vkops_fill(const vkops_device_fns *f, VkCommandBuffer cb, VkBuffer dst, VkDeviceSize off, VkDeviceSize size, uint32_t word) {
	f->fill_buffer(cb, dst, off, size, word);
}

void vkops_timestamp(const vkops_device_fns *f, VkCommandBuffer cb, VkQueryPool pool, uint32_t i) {
	f->write_timestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, pool, i);
}

void vkops_reset_query_pool(const vkops_device_fns *f, VkCommandBuffer cb, VkQueryPool pool, uint32_t first, uint32_t n) {
	f->reset_query_pool(cb, pool, first, n);
}
