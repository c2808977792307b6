// The small C side of package vk: what the Go binding (Vulkan 1.0 entry
// points only) cannot do. Everything here goes through function pointers
// looked up at run time, so nothing links against libvulkan.
#ifndef VKOPS_SHIM_H
#define VKOPS_SHIM_H

#include <stdint.h>
#include <vulkan/vulkan.h>

// vkops_load opens libvulkan.so.1 and returns its vkGetInstanceProcAddr,
// or NULL with a reason in err (at least 256 bytes).
void *vkops_load(char *err);

// The facts that need Vulkan 1.1+ queries (properties2 / features2).
typedef struct {
	int has_props2;
	uint32_t driver_id;
	char driver_name[VK_MAX_DRIVER_NAME_SIZE];
	char driver_info[VK_MAX_DRIVER_INFO_SIZE];
	uint8_t device_uuid[VK_UUID_SIZE];
	uint8_t driver_uuid[VK_UUID_SIZE];
	uint64_t max_memory_allocation_size;
	uint32_t subgroup_size;
	uint32_t subgroup_stages;
	uint32_t subgroup_ops;
	uint32_t storage_buffer_8bit;
	uint32_t storage_buffer_16bit;
	uint32_t shader_float16;
	uint32_t shader_int8;
	// Where the device has VK_EXT_external_memory_host (host_import set
	// on the call), the alignment of imported host pointers and sizes.
	uint64_t min_imported_host_pointer_alignment;
} vkops_props2;

// vkops_query_props2 fills out; host_import says that pd has
// VK_EXT_external_memory_host, whose properties may then be asked for.
void vkops_query_props2(void *gipa, VkInstance inst, VkPhysicalDevice pd, uint32_t api_version, int host_import,
	vkops_props2 *out);

// vkops_pin_loaded reloads every shared object in the process with
// RTLD_NODELETE, so that destroying an instance no longer unloads the
// driver and layers that creating it loaded.
void vkops_pin_loaded(void);

// vkops_has_instance_layer reports whether the loader offers the instance
// layer name.
int vkops_has_instance_layer(void *gipa, const char *name);

// vkops_queue_flags writes the queue flags of pd's first max queue
// families to flags and returns how many families pd has.
uint32_t vkops_queue_flags(void *gipa, VkInstance inst, VkPhysicalDevice pd, uint32_t *flags, uint32_t max);

// vkops_has_device_ext reports whether pd offers the device extension name.
int vkops_has_device_ext(void *gipa, VkInstance inst, VkPhysicalDevice pd, const char *name);

// Debug messenger (VK_EXT_debug_utils) that reports through the Go
// function vkopsGoDebugMessage with the given handle.
VkResult vkops_create_messenger(void *gipa, VkInstance inst, uintptr_t handle, VkDebugUtilsMessengerEXT *out);
void vkops_destroy_messenger(void *gipa, VkInstance inst, VkDebugUtilsMessengerEXT m);


// Device-level entry points that the hot path calls directly, without the
// binding's per-call marshalling (whose slice copies are freed by
// finalizers that may run while the driver still reads them).
typedef struct {
	PFN_vkUpdateDescriptorSets update_descriptor_sets;
	PFN_vkCmdBindPipeline bind_pipeline;
	PFN_vkCmdBindDescriptorSets bind_descriptor_sets;
	PFN_vkCmdPushConstants push_constants;
	PFN_vkCmdDispatch dispatch;
	PFN_vkCmdPipelineBarrier pipeline_barrier;
	PFN_vkCmdCopyBuffer copy_buffer;
	PFN_vkCmdFillBuffer fill_buffer;
	PFN_vkQueueSubmit queue_submit;
	PFN_vkCreateComputePipelines create_compute_pipelines;
	PFN_vkCmdWriteTimestamp write_timestamp;
	PFN_vkCmdResetQueryPool reset_query_pool;
	PFN_vkAllocateDescriptorSets allocate_descriptor_sets;
	// NULL unless the device was created with VK_KHR_push_descriptor.
	PFN_vkCmdPushDescriptorSetKHR push_descriptor_set;
	// Host-memory import: the first is NULL unless the device was created
	// with VK_EXT_external_memory_host.
	PFN_vkGetMemoryHostPointerPropertiesEXT host_pointer_props;
	PFN_vkCreateBuffer create_buffer;
	PFN_vkDestroyBuffer destroy_buffer;
	PFN_vkGetBufferMemoryRequirements buffer_requirements;
	PFN_vkAllocateMemory allocate_memory;
	PFN_vkBindBufferMemory bind_buffer_memory;
	PFN_vkFreeMemory free_memory;
	// A batch's life: begun, ended, waited for, reset.
	PFN_vkBeginCommandBuffer begin_command_buffer;
	PFN_vkEndCommandBuffer end_command_buffer;
	PFN_vkResetCommandBuffer reset_command_buffer;
	PFN_vkWaitForFences wait_for_fences;
	PFN_vkGetFenceStatus get_fence_status;
	PFN_vkResetFences reset_fences;
	PFN_vkResetDescriptorPool reset_descriptor_pool;
} vkops_device_fns;

// vkops_load_device_fns fills f; push_desc asks for vkCmdPushDescriptorSetKHR
// too (the device must have been created with VK_KHR_push_descriptor), and
// host_import for vkGetMemoryHostPointerPropertiesEXT (created with
// VK_EXT_external_memory_host).
int vkops_load_device_fns(void *gipa, VkInstance inst, VkDevice dev, int push_desc, int host_import, vkops_device_fns *f);

// vkops_host_buffer creates a buffer of size bytes with usage that may be
// bound to host memory imported from ptr (VK_EXT_external_memory_host),
// and returns the memory types that may hold it: those the buffer allows
// and the driver offers for ptr, and the bytes it needs.
VkResult vkops_host_buffer(const vkops_device_fns *f, VkDevice dev, const void *ptr, VkDeviceSize size,
	VkBufferUsageFlags usage, VkBuffer *buf, uint32_t *types, VkDeviceSize *need);

// vkops_import_host imports size bytes of host memory at ptr as memory of
// type type_index and binds buf to it, freeing the memory again if the
// bind fails. The host memory must stay valid until mem is freed; the
// caller keeps Go memory pinned that long.
VkResult vkops_import_host(const vkops_device_fns *f, VkDevice dev, VkBuffer buf, void *ptr, VkDeviceSize size,
	uint32_t type_index, VkDeviceMemory *mem);

// One binding of a dispatch: a buffer range, or a texel buffer view.
typedef struct {
	VkBuffer buffer;
	VkDeviceSize offset;
	VkDeviceSize rng;
	VkBufferView view;
} vkops_binding;

enum { VKOPS_MAX_BINDINGS = 16 };

// What a dispatch needs of its pipeline, kept beside the pipeline so that
// recording one takes a single call.
typedef struct {
	VkPipeline pipeline;
	VkPipelineLayout layout;
	VkDescriptorSetLayout set_layout;
	uint32_t nbinds;
	uint32_t push_size;
	// push_desc: set_layout is a push-descriptor layout, and dispatches
	// push their bindings with vkCmdPushDescriptorSetKHR instead of
	// allocating and writing a descriptor set.
	int push_desc;
	VkDescriptorType types[VKOPS_MAX_BINDINGS];
} vkops_pipe;

// vkops_record records one dispatch of p: binds pushed (p->push_desc), or
// else a descriptor set allocated from pool and written with them, the
// pipeline unless bind is 0 (it is bound already), the push constants and the dispatch itself, after a full
// compute/transfer barrier when barrier is set. It is the whole of an op's
// recording in one call from Go.
VkResult vkops_record(const vkops_device_fns *f, VkDevice dev, VkCommandBuffer cb, VkDescriptorPool pool,
	const vkops_pipe *p, const vkops_binding *binds, const void *push, uint32_t x, uint32_t y, uint32_t z, int barrier,
	int bind);

// vkops_record_n records n such dispatches, each with its bindings pushed
// or a descriptor set of its own as vkops_record does, and binding the
// pipeline, with a barrier between consecutive ones when barriers is set:
// the driver's floor for that work, measured by Device.TimeDispatches.
VkResult vkops_record_n(const vkops_device_fns *f, VkDevice dev, VkCommandBuffer cb, VkDescriptorPool pool,
	const vkops_pipe *p, const vkops_binding *binds, const void *push, uint32_t x, uint32_t y, uint32_t z,
	uint32_t n, int barriers);

// A global memory barrier from (src stages, src access) to (dst stages, dst access).
void vkops_barrier(const vkops_device_fns *f, VkCommandBuffer cb, VkPipelineStageFlags src_stage,
	VkAccessFlags src_access, VkPipelineStageFlags dst_stage, VkAccessFlags dst_access);

VkResult vkops_submit(const vkops_device_fns *f, VkQueue q, VkCommandBuffer cb, VkFence fence);

// The rest of a batch's life, without the binding's per-call marshalling,
// which allocates: begin (one-time submit), end, wait for its fence (a
// timeout of 0 polls it), reset the fence, the descriptor pool (unless
// VK_NULL_HANDLE) and the command buffer.
VkResult vkops_begin(const vkops_device_fns *f, VkCommandBuffer cb);
VkResult vkops_end(const vkops_device_fns *f, VkCommandBuffer cb);
VkResult vkops_wait(const vkops_device_fns *f, VkDevice dev, VkFence fence, uint64_t timeout);
// vkops_poll polls the fence until it signals, fails or ns nanoseconds
// have passed (VK_NOT_READY), giving up the CPU between polls where yield
// is set.
VkResult vkops_poll(const vkops_device_fns *f, VkDevice dev, VkFence fence, uint64_t ns, int yield);
VkResult vkops_reset(const vkops_device_fns *f, VkDevice dev, VkFence fence, VkDescriptorPool pool, VkCommandBuffer cb);

VkResult vkops_create_compute_pipeline(const vkops_device_fns *f, VkDevice dev, VkPipelineCache cache,
	VkShaderModule module, VkPipelineLayout layout, const uint32_t *spec, uint32_t nspec, VkPipeline *out);

void vkops_copy(const vkops_device_fns *f, VkCommandBuffer cb, VkBuffer src, VkDeviceSize src_off, VkBuffer dst,
	VkDeviceSize dst_off, VkDeviceSize size);
void vkops_fill(const vkops_device_fns *f, VkCommandBuffer cb, VkBuffer dst, VkDeviceSize off, VkDeviceSize size, uint32_t word);
void vkops_timestamp(const vkops_device_fns *f, VkCommandBuffer cb, VkQueryPool pool, uint32_t i);
void vkops_reset_query_pool(const vkops_device_fns *f, VkCommandBuffer cb, VkQueryPool pool, uint32_t first, uint32_t n);

#endif
